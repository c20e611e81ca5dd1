"""Searching a list of workspace files for a pattern: the same hits whichever engine runs.

The file list comes from the lister (paicli/tools/file_lister.py); nothing here decides what is searched.
In process, each file is read in a daemon thread that checks a cancel flag before each file (a cancelled
search ends at once and nobody waits for the thread at exit): opened below the workspace (beneath.py),
skipped when binary (a NUL byte anywhere in it) or gone since the listing, its matching lines counted and
the first few kept, with RE2 (paicli/tools/regex_syntax.py).

`rg` from PATH (never the workspace's) is the fast path: run with the listed regular files as arguments (so
it knows nothing of ignore rules, hidden files or its own config), its matching lines are the hits. Its
binary rule for named files agrees with ours where it decides before searching, which is when the whole
file fits its first buffer: a file with a NUL byte and a match is reported as "binary file matches" and
dropped here. rg decides per buffer in a file of `RG_WHOLE_BYTES` or more: the lines it reports of such a
file stand when the file holds no NUL byte at all (read here, not searched again), else they are dropped.
A name with a line break is searched here (rg's output could not be parsed). When rg is absent, refuses
the pattern or fails, every file is searched here. Symlinks are always searched here, so that rg never
follows one. On a loaded machine rg runs on one thread (`rg_threads`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import stat
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

from paicli.tools.beneath import OutsideRoot, open_regular
from paicli.tools.file_kinds import FOLDER_FLAGS, MAX_FILE_BYTES, Selection, TextKey, TextVerdicts
from paicli.tools.grep_hits import FileHits, parse_rg_output
from paicli.tools.regex_syntax import LinePattern, for_ripgrep

T = TypeVar("T")

RG_WHOLE_BYTES = 32 * 1024  # rg's first buffer holds 64 KB: below half of it, rg saw the file whole
RG_ARGUMENT_BYTES = 512 * 1024  # file names given to one rg process (ARG_MAX is 2 MB or more on Linux)
RG_OPTIONS = (
    "--no-config",  # RIPGREP_CONFIG_PATH could add any option
    "--no-ignore",
    "--hidden",
    "--no-mmap",  # the same binary rule for every file (a memory map checks only the file's start)
    "--encoding=none",  # no BOM sniffing, no transcoding: bytes as they are, as in process
    "--no-messages",
    "--with-filename",
    "--heading",  # a file's path once, then its records (paicli/tools/grep_hits.py)
    "--null",
    "--line-number",
    "--color=never",
)
RG_ONE_THREAD = "--threads=1"
PIECE_BYTES = 256 * 1024  # rg's output parsed a piece at a time, as it comes
FEW_FILES = 64  # files whose size is looked up on the event loop: a thread costs more


def read_hits(
    root: Path, paths: Sequence[str], pattern: LinePattern, keep: int, cancelled: threading.Event
) -> list[FileHits]:
    """The files of `paths` (in that order) with a matching line, each with its first `keep` lines."""
    found: list[FileHits] = []
    with _Opener(root) as opener:
        for path in paths:
            if cancelled.is_set():
                break
            hits = _file_hits(opener, path, pattern, keep, cancelled)
            if hits is not None:
                found.append(hits)
    return found


def text_files(root: Path, paths: Sequence[str], cancelled: threading.Event) -> set[str]:
    """Of `paths` (sorted), the files that are text when read now: within the size limit, no NUL byte. rg's
    lines of a large file it reported stand when it is (rg decides binary per buffer beyond its first one,
    this search by the whole file; the lines themselves are the same), so it is not searched twice."""
    with _Opener(root) as opener:
        return {path for path in paths if not cancelled.is_set() and _text(opener, path) is not None}


def _text(opener: _Opener, path: str) -> bytes | None:
    """The file's bytes when it is text: a regular file (or a link to one below the workspace) within the
    size limit, without a NUL byte; None when it is not, or is gone."""
    try:
        with open(opener.open(path), "rb", buffering=0) as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > MAX_FILE_BYTES:
                return None
            data = handle.read(size + 1)  # a byte more than its size: no 5 MB buffer for a 3 KB file
    except (OSError, ValueError, OutsideRoot):
        return None  # gone, turned into a folder, a link out of the workspace (include_ignored lists those)
    return None if len(data) > MAX_FILE_BYTES or b"\0" in data else data


def _file_hits(
    opener: _Opener, path: str, pattern: LinePattern, keep: int, cancelled: threading.Event
) -> FileHits | None:
    data = _text(opener, path)
    if data is None or pattern.first.search(data) is None:
        return None
    lines: list[tuple[int, str]] = []
    count, line_number, counted_to, previous = 0, 1, 0, -1
    # After the last line break there is no line (rg counts none there); an empty match may come twice.
    end = len(data) if data and not data.endswith(b"\n") else len(data) - 1
    for match in pattern.lines.finditer(data):
        start = match.start()
        if start == previous or start > end:
            continue
        previous = start
        count += 1
        if not count % 4096 and cancelled.is_set():  # a file of a million matching lines takes seconds
            return None
        if len(lines) < keep:
            line_number += data.count(b"\n", counted_to, start)
            counted_to = start
            lines.append((line_number, match.group().decode("utf-8", "replace")))
    return FileHits(path, count, lines) if count else None


class _Opener:
    """Opens the files below `root` one folder at a time: each folder of a path opened with O_NOFOLLOW from
    the one above it, the last folder's handle kept for the next file (the files come sorted), so reading
    thousands of files costs one open each, and nothing below a symlink is ever reached. A symlink itself,
    or anything that fails this way, is opened by beneath.open_regular, which follows links inside `root`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._folder = ""
        self._fd: int | None = None

    def __enter__(self) -> _Opener:
        return self

    def __exit__(self, *exc: object) -> None:
        self._close()

    def open(self, path: str) -> int:
        folder, _, name = path.rpartition("/")
        try:
            fd = os.open(name, _FILE_FLAGS, dir_fd=self._folder_fd(folder))
        except OSError:
            return open_regular(self.root, path)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            return open_regular(self.root, path)
        os.set_blocking(fd, True)
        return fd

    def _folder_fd(self, folder: str) -> int:
        if self._fd is not None and folder == self._folder:
            return self._fd
        self._close()
        fd = os.open(self.root, FOLDER_FLAGS)
        try:
            for part in folder.split("/") if folder else ():
                inner = os.open(part, FOLDER_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = inner
        except OSError:
            os.close(fd)
            raise
        self._folder, self._fd = folder, fd
        return fd

    def _close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


async def search(
    root: Path,
    chosen: Selection,
    pattern: LinePattern,
    keep: int,
    rg: str | None,
    verdicts: TextVerdicts | None = None,
) -> tuple[list[FileHits], str]:
    """The hits of every chosen file, in path order, and the engine that found them ("rg", "re2")."""
    engine = "re2"
    by_rg: dict[str, FileHits] = {}
    here: Sequence[str] = [*chosen.regular, *chosen.links]
    plain = [path for path in chosen.regular if "\n" not in path and "\r" not in path]
    if rg is not None and plain:
        from_rg = await ripgrep_hits(rg, root, pattern.source, plain, keep)
        if from_rg is not None:
            engine, by_rg = "rg", from_rg
            unparsable = [path for path in chosen.regular if "\n" in path or "\r" in path]
            here = [*unparsable, *chosen.links]
    ordered = sorted(here)
    found = await rg_text_hits(root, by_rg, verdicts)
    cancelled = threading.Event()
    try:
        if ordered:
            found += await off_loop(lambda: read_hits(root, ordered, pattern, keep, cancelled))
    finally:
        cancelled.set()  # a cancelled search stops before its next file
    return sorted(found, key=lambda hits: hits.path), engine


async def rg_text_hits(
    root: Path,
    by_rg: Mapping[str, FileHits],
    verdicts: TextVerdicts | None = None,
    sized: Mapping[str, TextKey] | None = None,
) -> list[FileHits]:
    """rg's hits, those of a file of RG_WHOLE_BYTES or more (its size now) kept only when it holds no NUL
    byte (`text_files`; `verdicts`: the session's answers for files unchanged since). `sized`: the large
    ones among every file rg named, looked at while rg ran; else they are looked at here."""
    paths = sorted(by_rg)
    if sized is not None:
        large = {path: sized[path] for path in paths if path in sized}
    elif len(paths) <= FEW_FILES:
        large = _large(root, paths)
    else:
        large = await off_loop(lambda: _large(root, paths))
    known = {path: verdicts.get(key) for path, key in large.items()} if verdicts is not None else {}
    unknown = sorted(path for path in large if known.get(path) is None)
    text: set[str] = set()
    if unknown:
        cancelled = threading.Event()
        try:
            text = await off_loop(lambda: text_files(root, unknown, cancelled))
        finally:
            cancelled.set()
        if verdicts is not None:
            for path in unknown:
                verdicts.put(large[path], path in text)
    text |= {path for path, is_text in known.items() if is_text}
    return [hits for path, hits in by_rg.items() if path not in large or path in text]


def _large(root: Path, paths: Sequence[str]) -> dict[str, TextKey]:
    """Of `paths` (sorted), those of RG_WHOLE_BYTES or more now, with their keys; one gone since is not
    (rg's lines stand, as those of a small file)."""
    folder = os.open(root, FOLDER_FLAGS)
    try:
        return large_in(folder, paths)
    finally:
        os.close(folder)


def large_in(folder: int, paths: Iterable[str]) -> dict[str, TextKey]:
    """`_large` with the workspace folder open as `folder`."""
    large: dict[str, TextKey] = {}
    for path in paths:
        with contextlib.suppress(OSError, ValueError):
            info = os.lstat(path, dir_fd=folder)
            if info.st_size >= RG_WHOLE_BYTES:
                large[path] = (path, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    return large


async def ripgrep_hits(
    rg: str, root: Path, pattern: str, files: Sequence[str], keep: int
) -> dict[str, FileHits] | None:
    """The files rg finds a match in (those it calls binary left out), each with its matching lines
    counted and the first `keep` kept; None when rg refuses the pattern, fails, or writes what this
    cannot read (paicli/tools/grep_hits.py)."""
    expression = for_ripgrep(pattern)
    runs = [run_rg(rg, root, [*RG_OPTIONS, "-e", expression, "--", *chunk]) for chunk in _chunks(files)]
    outputs = await asyncio.gather(*runs)  # the chunks at once: rg is parallel, but starts slowly
    if any(output is None for output in outputs):
        return None
    # off the loop: millions of matching lines take seconds to parse, and a signal must not wait for them
    return await off_loop(lambda: parse_rg_output([output or b"" for output in outputs], keep))  # None: unread


async def run_rg(
    rg: str, root: Path, arguments: Sequence[str], sink: Callable[[bytes], None] | None = None
) -> bytes | None:
    """rg's output, run in `root` in a session of its own (killed with it when the search is cancelled);
    None when rg refused the pattern or could not run. With `sink`, each piece of the output goes there
    as it comes, and b"" is returned."""
    process = await asyncio.create_subprocess_exec(
        rg,
        *rg_threads(),
        *arguments,
        cwd=root,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        start_new_session=True,
    )
    said = False
    try:
        if sink is None or process.stdout is None:
            output, _ = await process.communicate()
            said = bool(output)
        else:
            output = b""
            while piece := await process.stdout.read(PIECE_BYTES):
                said = True
                sink(piece)
            await process.wait()
    finally:
        if process.returncode is None:  # cancelled: the whole group goes, at once
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError, asyncio.CancelledError):
                await asyncio.shield(_reaped(process))
    if process.returncode == 2 and not said:
        return None  # the pattern was refused (or rg could not run at all): search in process
    return output


async def _reaped(process: asyncio.subprocess.Process) -> None:
    """Waits for a killed rg. Its output is read to the end first: once more than the reader's buffer was
    left unread, asyncio paused the pipe, never saw its end, and `wait()` never returned (the exit is only
    reported once every pipe is closed): SIGTERM during a search with many matches hung paicli."""
    if process.stdout is not None:
        with contextlib.suppress(OSError, ValueError):
            while await process.stdout.read(1 << 20):
                pass
    await process.wait()


def rg_threads(load: float | None = None, cores: int | None = None) -> list[str]:
    """rg's thread option: one thread when the machine is loaded (the last minute's load average at least
    its number of cores), else rg's own choice. On a loaded machine rg's threads only wait for each other:
    one spends about a fifth less CPU and no more wall time (BENCHMARKS.md, 17). The results are the same
    (every file's lines come together, and the hits are sorted by path)."""
    try:
        load = os.getloadavg()[0] if load is None else load
    except OSError:  # no load average on this system
        return []
    cores = (os.cpu_count() or 1) if cores is None else cores
    return [RG_ONE_THREAD] if load >= cores else []


def _chunks(files: Sequence[str]) -> list[list[str]]:
    chunks: list[list[str]] = [[]]
    size = 0
    for path in files:
        length = len(os.fsencode(path)) + 3
        if chunks[-1] and size + length > RG_ARGUMENT_BYTES:
            chunks.append([])
            size = 0
        # "./": rg's notes are told from its records by it (grep_hits.py), and "-" is not read as stdin
        chunks[-1].append("./" + path)
        size += length
    return chunks


async def off_loop(work: Callable[[], T]) -> T:
    """`work()` in a daemon thread; its result or exception, or CancelledError at once (the thread is
    never joined: with asyncio.to_thread, a cancelled search would hold up the exit until it finished)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def deliver(outcome: Callable[[], None]) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting any more
            loop.call_soon_threadsafe(outcome)

    def run() -> None:
        try:
            result = work()
        except BaseException as error:
            caught = error
            deliver(lambda: None if future.done() else future.set_exception(caught))
        else:
            deliver(lambda: None if future.done() else future.set_result(result))

    threading.Thread(target=run, name="paicli-grep", daemon=True).start()
    return await future
