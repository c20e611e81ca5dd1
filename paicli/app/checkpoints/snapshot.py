"""Taking a checkpoint: the workspace's files as one commit of the shadow repository.

What is taken: what `git status` would show, by the workspace's own ignore rules (its `.gitignore`
files and `.git/info/exclude`) plus paicli's (`.paicli/`); regular files up to the size limit and
symlinks (as links). Nested repositories, with or without commits, are taken as plain files (git
alone would store them as gitlinks, or refuse one without a commit). The shadow index is kept between
checkpoints, so only what changed since the last one is read again.
"""

from __future__ import annotations

import itertools
import os
import re
import stat
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from paicli.app.checkpoints.git import GitError, ShadowGit, split_z
from paicli.app.checkpoints.images import UnsafePath, check_relative, look_in, parent_folder, read_all

# paicli's own folder, and the temp files of its atomic writes and undos (a write under way in another task
# or process: gone again by the time git reads it)
PAICLI_EXCLUDES = ("/.paicli/", "*.paicli-tmp", "*.paicli-undo")
USER_EXCLUDE_LIMIT = 1 << 20  # bytes of the user's .git/info/exclude read at most
NESTED_DEPTH = 16
BULK = 100  # new contents from this many paths on go into one pack
BULK_REF = "refs/paicli-bulk"  # the first checkpoint's pack commit, for the moment it is written
_RETRIES = 8
_VANISHED = re.compile(r"error: ([^\n]+): does not exist and --remove not passed")  # gone since it was listed
_UNREADABLE = re.compile(r"(?:unable to index file|open\(\"|Unable to process path|unable to stat) '?\"?([^'\"\n]+)")

Notify = Callable[[str], None]
DEFAULT_MAX_NEW_FILES = 50_000
DEFAULT_MAX_NEW_BYTES = 1_000_000_000


class WorkspaceTooLarge(ValueError):
    """A checkpoint would store more new files or bytes than allowed (paicli started in a home folder, a
    dependency folder nobody ignored): nothing is stored, and checkpoints stop until paicli starts again."""


@dataclass(frozen=True)
class SnapshotLimits:
    max_file_bytes: int  # a bigger file is left out, with a notice
    max_new_files: int = DEFAULT_MAX_NEW_FILES  # one checkpoint storing more new contents is refused
    max_new_bytes: int = DEFAULT_MAX_NEW_BYTES


class Abandoned(Exception):
    """A snapshot given up on because its `stop` was set (the warm-up's, at the session's end)."""


class Snapshotter:
    def __init__(self, git: ShadowGit, root: Path, *, limits: SnapshotLimits, notify: Notify) -> None:
        self.git = git
        self.root = root
        self.limits = limits
        self.max_file_bytes = limits.max_file_bytes
        self.notify = notify
        self._told: set[str] = set()  # paths already reported as left out
        self.too_large: WorkspaceTooLarge | None = None  # once refused, refused again without looking
        self.too_large_told = False
        self._sizes: dict[str, int] = {}  # of the regular files the last look at the workspace found
        self.stop: threading.Event | None = None  # set: a snapshot storing many files gives up (Abandoned)

    def take(self, message: str) -> str:
        """The id of a commit holding the workspace as it is now."""
        if self.too_large is not None:
            raise self.too_large
        self.git.write_excludes([*PAICLI_EXCLUDES, *user_excludes(self.root)])
        adds, drops = self._changed_paths()
        self._check_size(adds)
        self._update_index(adds, drops)
        tree = self.git.run(["write-tree"]).decode().strip()
        # A commit every time, never one remembered from before: another paicli may have pruned it since.
        return self.git.run(["commit-tree", tree, "-m", message]).decode().strip()

    def _changed_paths(self) -> tuple[list[str], list[str]]:
        """(paths to add or update, paths to drop) since the last checkpoint."""
        listed = split_z(self.git.run(["ls-files", "-z", "--modified", "--deleted", "--others", "--exclude-standard"]))
        found: dict[str, None] = {}
        for path in listed:
            if path.endswith("/"):
                found.update(dict.fromkeys(self._nested(path, NESTED_DEPTH)))
            else:
                found[path] = None
        real_folders: dict[str, bool] = {}
        self._sizes = {}
        adds, drops = [], []
        for path in found:
            kind = self._kind(path, real_folders)
            if kind == "gone":
                drops.append(path)
            elif kind == "take":
                adds.append(path)
        return adds, drops

    def _check_size(self, adds: list[str]) -> None:
        limits = self.limits
        too_many = len(adds) > limits.max_new_files
        total = 0 if too_many else sum(self._sizes.get(path, 0) for path in adds)
        if not too_many and total <= limits.max_new_bytes:
            return
        what = f"{len(adds):,} files" if too_many else f"{total / 1e6:,.0f} MB"
        limit = (
            f"checkpoint_max_files ({limits.max_new_files:,})"
            if too_many
            else (f"checkpoint_max_new_mb ({limits.max_new_bytes / 1e6:,.0f})")
        )
        self.too_large = WorkspaceTooLarge(
            f"the workspace has {what} not yet checkpointed, over {limit}: ignore big folders in .gitignore, "
            "raise the limit, or set checkpoints = false"
        )
        raise self.too_large

    def _nested(self, prefix: str, depth: int) -> Iterable[str]:
        """The files of a nested repository that git shows as one `prefix/` entry."""
        if depth <= 0:
            return []
        folder = self.root / prefix
        env = self.git.env(GIT_WORK_TREE=str(folder), GIT_INDEX_FILE=str(self.git.git_dir / "paicli-nested-index"))
        listed = split_z(self.git.run(["ls-files", "-z", "--others", "--exclude-standard"], env=env, cwd=folder))
        paths: list[str] = []
        for path in listed:
            if path.endswith("/"):
                paths.extend(self._nested(prefix + path, depth - 1))
            else:
                paths.append(prefix + path)
        return paths

    def _kind(self, path: str, real_folders: dict[str, bool]) -> str:
        """What `path` is to a checkpoint: "take", "gone" (nothing there, or only through a symlinked
        folder), or "skip" (too big, a special file); no symlink is followed on the way."""
        parts = path.split("/")
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth])
            if folder not in real_folders:
                try:
                    real_folders[folder] = stat.S_ISDIR(os.lstat(self.root / folder).st_mode)
                except OSError:
                    real_folders[folder] = False
            if not real_folders[folder]:
                return "gone"
        try:
            st = os.lstat(self.root / path)
        except FileNotFoundError:
            return "gone"
        except OSError:
            return "skip"
        if stat.S_ISLNK(st.st_mode):
            return "take"
        if not stat.S_ISREG(st.st_mode):
            return "gone" if stat.S_ISDIR(st.st_mode) else "skip"
        self._sizes[path] = st.st_size
        if st.st_size > self.max_file_bytes:
            if path not in self._told:
                self._told.add(path)
                limit = self.max_file_bytes / 1e6
                self.notify(f"checkpoints leave out {path} ({st.st_size / 1e6:.1f} MB, over the {limit:g} MB limit)")
            return "skip"
        return "take"

    def _update_index(self, adds: list[str], drops: list[str]) -> None:
        if drops:
            self._run_update(["--force-remove"], drops)
        if len(adds) >= BULK:
            self._store_in_one_pack(adds)
        if adds:
            self._run_update(["--add", "--replace"], adds)

    def _store_in_one_pack(self, paths: list[str]) -> None:
        """Stores the contents of many paths as one pack (`git fast-import`) before update-index reads
        them: thousands of loose objects cost seconds of file system work, one pack a fraction of it.
        update-index then finds each content stored and only hashes it. No delta search (it would cost
        more than it saves here); a path that changes in between is simply stored again, loose. For the
        first checkpoint (an empty index) the folders' trees go into the pack too, as a commit under a
        ref dropped right after: write-tree then finds them stored as well."""
        whole = not self.git.index.exists()
        config = ["-c", "core.bigFileThreshold=1", "-c", "core.compression=1"]
        self.git.feed([*config, "fast-import", "--quiet", "--done"], self._stream(paths, whole))
        if whole:
            self.git.run(["update-ref", "-d", BULK_REF])

    def _stream(self, paths: list[str], whole: bool) -> Iterator[bytes]:
        """fast-import's input: each content as a blob (or, `whole`, as a file of one commit), the files
        of one folder read through one handle on it (reached without following a symlink)."""
        if whole:
            yield b"commit %s\ncommitter paicli <checkpoints@paicli.invalid> 0 +0000\ndata 0\n" % BULK_REF.encode()
        folder_of = lambda path: path.rpartition("/")[0]  # noqa: E731
        for _folder, group in itertools.groupby(sorted(paths, key=folder_of), folder_of):
            if self.stop is not None and self.stop.is_set():
                raise Abandoned  # fast-import is killed: nothing it read is kept, the index is untouched
            names = list(group)
            try:
                with parent_folder(self.root, check_relative(names[0])) as folder:
                    if folder is not None:
                        yield from self._folder_stream(folder, names, whole)
            except (OSError, UnsafePath):
                continue  # update-index reads these paths itself
        yield b"done\n"

    def _folder_stream(self, folder: int, paths: list[str], whole: bool) -> Iterator[bytes]:
        for path in paths:
            content = self._content(folder, path.rpartition("/")[2])
            if content is None:
                continue
            mode, data = content
            yield b"M %s inline %s\n" % (mode.encode(), quoted(path)) if whole else b"blob\n"
            yield b"data %d\n" % len(data)
            yield data
            yield b"\n"

    def _content(self, folder: int, name: str) -> tuple[str, bytes] | None:
        """A regular file's mode and bytes or a symlink's and its target; None for anything else or
        over the size limit."""
        try:
            found = look_in(folder, name)
        except OSError:
            return None
        if found is None or found.fd is None:
            return None if found is None or found.target is None else (found.mode, found.target)
        try:
            data = read_all(found.fd, self.max_file_bytes)
        except OSError:
            return None
        finally:
            os.close(found.fd)
        return None if data is None else (found.mode, data)

    def _run_update(self, flags: list[str], paths: list[str]) -> None:
        for _ in range(_RETRIES):
            if not paths:
                return
            payload = b"".join(os.fsencode(p) + b"\0" for p in paths)
            try:
                self.git.run(["update-index", "-z", *flags, "--stdin"], input=payload)
                return
            except GitError as error:
                if "index.lock" in str(error) and "exists" in str(error):
                    # Only paicli writes this index, and it holds the store's lock: the lock file is stale.
                    (self.git.git_dir / "paicli-index.lock").unlink(missing_ok=True)
                    continue
                gone = _VANISHED.search(str(error))
                if gone is not None and gone.group(1) in paths:  # removed since it was listed: nothing to keep
                    paths = [p for p in paths if p != gone.group(1)]
                    continue
                bad = _UNREADABLE.search(str(error))
                if bad is None or bad.group(1) not in paths:
                    raise
                self.notify(f"checkpoints leave out {bad.group(1)}: it cannot be read")
                paths = [p for p in paths if p != bad.group(1)]
        raise GitError("git update-index kept failing")


def quoted(path: str) -> bytes:
    """A path as fast-import reads it: in double quotes, with backslash, quote and newline escaped."""
    raw = os.fsencode(path).replace(b"\\", b"\\\\").replace(b'"', b'\\"').replace(b"\n", b"\\n")
    return b'"' + raw + b'"'


def user_excludes(root: Path) -> list[str]:
    """Lines of the workspace's `.git/info/exclude` (a regular file reached without symlinks), if any."""
    path = root / ".git" / "info" / "exclude"
    try:
        for folder in (root / ".git", root / ".git" / "info"):
            if not stat.S_ISDIR(os.lstat(folder).st_mode):
                return []
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > USER_EXCLUDE_LIMIT:
            return []
        text = path.read_bytes().decode("utf-8", "surrogateescape")
    except OSError:
        return []
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]
