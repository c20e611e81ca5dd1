"""The index of one workspace: each listed file's words (for BM25), its symbols and its size, kept in a
SQLite file under ~/.paicli/index/<hash of the workspace path>/ (never in the repository).

Built once, then brought up to date on each use: a file whose size or modification time changed is read
again, a file no longer listed is dropped. A tracked file whose content git's listing names by the same
object id as when it was read is not even looked at (no stat: most of an update's time on a large tree).
Bounded: files over `MAX_SOURCE_BYTES` (or binary, minified) are listed with their path words only, and
one update stops reading after `time_budget` seconds (the files it did not reach are read by the next
update; until then they rank by their path alone).

Two processes: the one that takes the lock file (`build.lock`, O_EXCL) updates; another one waits up to
`LOCK_WAIT` seconds for it and then uses the index as it is. A lock is taken over at once when its
process is gone (paicli killed mid-build), and after `STALE_LOCK` seconds in any case. An index SQLite
cannot read (a corrupt or foreign file, a damaged page met while updating or ranking) is deleted and built
again, with a Notice saying so.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from paicli.common.events import EventSink, Notice
from paicli.repomap.files import Lister, read_source
from paicli.repomap.history import History, head_of, read_history
from paicli.repomap.tags import Symbol, symbols_of
from paicli.repomap.words import counts, words

SCHEMA_VERSION = "2"
LOCK_WAIT = 2.0
STALE_LOCK = 120.0
TIME_BUDGET = 30.0
PATH_WEIGHT = 3  # a path's words count this many times in its file's document
SYMBOL_WEIGHT = 2
MAX_TERMS = 3_000  # distinct words kept per file (the most frequent)

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL,
    version TEXT NOT NULL, length INTEGER NOT NULL, symbols TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS terms (term TEXT NOT NULL, file INTEGER NOT NULL, tf INTEGER NOT NULL,
    PRIMARY KEY (term, file)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS terms_by_file ON terms (file);
CREATE TABLE IF NOT EXISTS defs (name TEXT NOT NULL, file INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS defs_by_name ON defs (name);
CREATE INDEX IF NOT EXISTS defs_by_file ON defs (file);
CREATE TABLE IF NOT EXISTS changes (path TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS together (a TEXT NOT NULL, b TEXT NOT NULL, n INTEGER NOT NULL,
    PRIMARY KEY (a, b)) WITHOUT ROWID;
"""


class _Known(NamedTuple):
    """What the index holds of a file: its row, and what it was like when it was read (its stat data, and
    the object id git gave its content then, "" when git gave none)."""

    id: int
    mtime_ns: int
    size: int
    version: str


TABLES = ("files", "terms", "defs", "changes", "together")


@dataclass(frozen=True)
class UpdateReport:
    listed: int
    read: int  # files (re)read by this update
    dropped: int
    pending: int  # files the time budget left for the next update
    seconds: float
    updated: bool  # False when another process held the lock and this one used the index as it was


def index_folder(home: Path, workspace: Path) -> Path:
    digest = hashlib.sha256(os.fsencode(os.path.realpath(workspace))).hexdigest()[:24]
    return home / ".paicli" / "index" / digest


class Index:
    def __init__(
        self, workspace: Path, folder: Path, lister: Lister, sink: EventSink, *, weights: tuple[int, int] | None = None
    ) -> None:
        """`weights`: how many times a path's and a symbol's words count (PATH_WEIGHT, SYMBOL_WEIGHT); (0, 0)
        gives plain BM25 over the contents (the baseline `python -m bench context` compares with)."""
        self.workspace = workspace
        self.path_weight, self.symbol_weight = weights or (PATH_WEIGHT, SYMBOL_WEIGHT)
        self.folder = folder
        self.lister = lister
        self.sink = sink
        self.paths: list[str] = []  # what the lister gave at the latest update
        self._db: sqlite3.Connection | None = None
        self._known: dict[str, _Known] | None = None  # see _known_files
        self._version = 0

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            self._db = self._open()
        return self._db

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
        self._known = None

    # ---- opening -------------------------------------------------------------------------------

    def discard(self, error: sqlite3.DatabaseError) -> None:
        """Deletes an index SQLite found unreadable or damaged (`error`), with a notice: the next use builds
        it again. Called wherever reading it fails: opening, updating, ranking (repo_map.py)."""
        self.close()
        message = f"the repository index could not be read ({error}); rebuilding it"
        self.sink.emit(Notice(level="warning", message=message))
        for name in ("index.sqlite", "index.sqlite-wal", "index.sqlite-shm"):
            with contextlib.suppress(FileNotFoundError):
                (self.folder / name).unlink()

    def _open(self) -> sqlite3.Connection:
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = self.folder / "index.sqlite"
        try:
            return self._connect(path)
        except sqlite3.DatabaseError as error:
            self.discard(error)
            return self._connect(path)

    def _connect(self, path: Path) -> sqlite3.Connection:
        db = sqlite3.connect(path, timeout=LOCK_WAIT, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")  # a commit does not wait for the disk: a crash loses at most
            # the latest updates of this cache, never its consistency (WAL), and the next update redoes them
            db.executescript(SCHEMA)
            row = db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
            if row is None or row[0] != SCHEMA_VERSION:  # no quick_check: it reads the whole file (0.1 s on
                # mypy's index); damage shows as an error where a page is read, and that discards the index
                db.executescript("".join(f"DROP TABLE IF EXISTS {t};" for t in TABLES) + SCHEMA)
                db.execute("INSERT OR REPLACE INTO meta VALUES ('version', ?)", (SCHEMA_VERSION,))
        except sqlite3.DatabaseError:
            db.close()
            raise
        return db

    # ---- updating ------------------------------------------------------------------------------

    def update(self, time_budget: float = TIME_BUDGET) -> UpdateReport:
        """Lists the workspace and brings the index up to date with it (see the module's docstring)."""
        started = time.monotonic()
        listing = self.lister(self.workspace)
        self.paths = list(listing.files)
        with self._lock() as held:
            if not held:
                self.paths = [path for path in self.paths if os.path.lexists(self.workspace / path)]
                return UpdateReport(len(self.paths), 0, 0, 0, time.monotonic() - started, updated=False)
            try:
                return self._update(started, time_budget, listing.versions)
            except sqlite3.DatabaseError as error:
                self.discard(error)
                return self._update(started, time_budget, listing.versions)

    def _update(self, started: float, time_budget: float, versions: Mapping[str, str]) -> UpdateReport:
        db = self.db
        known = self._known_files()
        listed = set(self.paths)
        gone = [path for path in known if path not in listed]
        read = pending = 0
        root = os.fspath(self.workspace) + os.sep  # a string join: pathlib's costs more than the stat
        db.execute("BEGIN IMMEDIATE")
        try:
            for path in gone:
                self._forget(known.pop(path).id)
            present: list[str] = []
            for path in self.paths:
                old = known.get(path)
                version = versions.get(path, "")
                if old is not None and version and old.version == version:
                    present.append(path)  # git saw this very content when it was read: no stat needed
                    continue
                try:
                    entry = os.stat(root + path, follow_symlinks=False)
                except OSError:  # gone since the listing (or deleted but still in git's index)
                    if old is not None:
                        self._forget(known.pop(path).id)
                        gone.append(path)
                    continue
                present.append(path)
                now = _Known(old.id if old else 0, entry.st_mtime_ns, entry.st_size, version)
                if old is not None and (old.mtime_ns, old.size) == (now.mtime_ns, now.size):
                    if old.version != version:  # committed, or changed since git's index: the same content
                        db.execute("UPDATE files SET version = ? WHERE id = ?", (version, old.id))
                        known[path] = now
                    continue
                if time.monotonic() - started > time_budget:
                    pending += 1
                    continue
                if old is not None:
                    self._forget(old.id)
                known[path] = now._replace(id=self._add(path, now))
                read += 1
            self._remember_history()
            db.execute("COMMIT")
            self.paths = present
        except BaseException:
            self._known = None
            db.execute("ROLLBACK")
            raise
        return UpdateReport(len(present), read, len(gone), pending, time.monotonic() - started, updated=True)

    def _remember_history(self) -> None:
        """The files that change together (history.py), read again when HEAD has moved."""
        head = head_of(self.workspace) or ""
        row = self.db.execute("SELECT value FROM meta WHERE key = 'history_head'").fetchone()
        if row is not None and row[0] == head:
            return
        history = read_history(self.workspace, head) if head else History("")
        self.db.execute("DELETE FROM changes")  # not executescript: it would commit the update half done
        self.db.execute("DELETE FROM together")
        self.db.executemany("INSERT INTO changes VALUES (?, ?)", history.changes.items())
        self.db.executemany(
            "INSERT INTO together VALUES (?, ?, ?)", ((a, b, n) for (a, b), n in history.together.items())
        )
        self.db.execute("INSERT OR REPLACE INTO meta VALUES ('history_head', ?)", (head,))

    def _known_files(self) -> dict[str, _Known]:
        """The indexed files by path: kept from this process's previous update unless another connection
        has written the index since (SQLite's data_version says so)."""
        version = int(self.db.execute("PRAGMA data_version").fetchone()[0])
        if self._known is None or version != self._version:
            rows = self.db.execute("SELECT path, id, mtime_ns, size, version FROM files")
            self._known = {row[0]: _Known(*row[1:]) for row in rows}
            self._version = version
        return self._known

    def _forget(self, file_id: int) -> None:
        for table, column in (("terms", "file"), ("defs", "file"), ("files", "id")):
            self.db.execute(f"DELETE FROM {table} WHERE {column} = ?", (file_id,))

    def _add(self, path: str, stat: _Known) -> int:
        text = read_source(self.workspace, path)
        symbols = symbols_of(path, text) if text is not None else []
        document: Counter[str] = counts(text) if text is not None else Counter()
        for word in words(path) if self.path_weight else ():
            document[word] += self.path_weight
        for symbol in symbols if self.symbol_weight else ():
            for word in words(symbol.name):
                document[word] += self.symbol_weight
        kept = dict(document.most_common(MAX_TERMS))
        shown = [[s.name, s.kind, s.line, s.signature, s.depth] for s in symbols]
        cursor = self.db.execute(
            "INSERT INTO files (path, mtime_ns, size, version, length, symbols) VALUES (?, ?, ?, ?, ?, ?)",
            (path, stat.mtime_ns, stat.size, stat.version, sum(kept.values()), json.dumps(shown)),
        )
        file_id = int(cursor.lastrowid or 0)
        self.db.executemany("INSERT INTO terms VALUES (?, ?, ?)", ((term, file_id, tf) for term, tf in kept.items()))
        self.db.executemany("INSERT INTO defs VALUES (?, ?)", ((name, file_id) for name in {s.name for s in symbols}))
        return file_id

    @contextlib.contextmanager
    def _lock(self) -> Iterator[bool]:
        """True while this process holds the build lock; False when another kept it past LOCK_WAIT."""
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        lock = self.folder / "build.lock"
        deadline = time.monotonic() + LOCK_WAIT
        while True:
            try:
                fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
            except FileExistsError:
                if _stale(lock):
                    with contextlib.suppress(FileNotFoundError):
                        lock.unlink()
                    continue
                if time.monotonic() > deadline:
                    yield False
                    return
                time.sleep(0.05)
                continue
            os.write(fd, str(os.getpid()).encode())
            os.close(fd)
            break
        try:
            yield True
        finally:
            with contextlib.suppress(FileNotFoundError):
                lock.unlink()

    # ---- reading (what ranking needs) ----------------------------------------------------------

    def documents(self) -> tuple[int, float]:
        """How many files are indexed and their mean length in words."""
        count, total = self.db.execute("SELECT count(*), coalesce(sum(length), 0) FROM files").fetchone()
        return int(count), (total / count if count else 1.0)

    def postings(self, term: str) -> dict[str, tuple[int, int]]:
        """path → (tf of `term`, the file's length) for each indexed file holding the word."""
        rows = self.db.execute(
            "SELECT f.path, t.tf, f.length FROM terms t JOIN files f ON f.id = t.file WHERE t.term = ?", (term,)
        )
        return {path: (tf, length) for path, tf, length in rows}

    def symbols(self, path: str) -> list[Symbol]:
        row = self.db.execute("SELECT symbols FROM files WHERE path = ?", (path,)).fetchone()
        if row is None:
            return []
        return [Symbol(name, kind, line, signature, depth) for name, kind, line, signature, depth in json.loads(row[0])]

    def changed_with(self, path: str) -> tuple[int, dict[str, int]]:
        """How many commits of the history changed `path`, and the files changed with it (history.py)."""
        row = self.db.execute("SELECT n FROM changes WHERE path = ?", (path,)).fetchone()
        if row is None:
            return 0, {}
        return int(row[0]), dict(self.db.execute("SELECT b, n FROM together WHERE a = ?", (path,)).fetchall())

    def definers(self, names: Iterable[str]) -> dict[str, list[str]]:
        """name → the files defining a top-level symbol of that name."""
        found: dict[str, list[str]] = {}
        chosen = list(dict.fromkeys(names))
        for start in range(0, len(chosen), 500):
            batch = chosen[start : start + 500]
            marks = ",".join("?" * len(batch))
            rows = self.db.execute(
                f"SELECT d.name, f.path FROM defs d JOIN files f ON f.id = d.file WHERE d.name IN ({marks})", batch
            )
            for name, path in rows:
                found.setdefault(name, []).append(path)
        return found


def _stale(lock: Path) -> bool:
    """A lock whose process is gone (paicli was killed mid-build), or older than STALE_LOCK."""
    try:
        pid = int(lock.read_text() or "0")
        age = time.time() - lock.stat().st_mtime
    except (OSError, ValueError):
        return False  # being written, or gone already: look again
    if age > STALE_LOCK:
        return True
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False
