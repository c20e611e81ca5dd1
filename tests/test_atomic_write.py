"""The atomic write (paicli/common/atomic_write.py) on real files: what it keeps, what it never leaves behind, and
what a reader or a killed writer can see. Its users' own tests: tests/tools/test_atomic.py,
tests/faults/test_files.py, tests/app/checkpoints/, tests/ui/prompt/test_history.py."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import stat
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from paicli.common.atomic_write import link_in_folder, remove_leftovers, write_in_folder, write_path
from paicli.tools.atomic import atomic_write

REPO = Path(__file__).resolve().parent.parent


def leftovers(folder: Path, suffix: str = ".paicli-tmp") -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(suffix))


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


@contextmanager
def opened(folder: Path) -> Iterator[int]:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        yield fd
    finally:
        os.close(fd)


@contextmanager
def umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def run_python(code: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        cwd=REPO,
        text=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def test_the_content_is_written_and_nothing_else_is_left(tmp_path: Path) -> None:
    write_path(tmp_path / "a" / "b.txt", b"first")
    write_path(tmp_path / "a" / "b.txt", b"second, longer")
    assert (tmp_path / "a" / "b.txt").read_bytes() == b"second, longer"
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["b.txt"]


def test_replacing_keeps_the_mode_bits_and_a_new_file_gets_new_mode_minus_the_umask(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("old")
    script.chmod(0o751)
    with umask(0o022):
        write_path(script, b"new")
        with opened(tmp_path) as folder:
            write_in_folder(folder, "plain", b"x")
            write_in_folder(folder, "tool", b"x", new_mode=0o777)  # undo's new executable
    assert (mode_of(script), script.read_text()) == (0o751, "new")
    assert (mode_of(tmp_path / "plain"), mode_of(tmp_path / "tool")) == (0o644, 0o755)


def test_a_given_mode_is_set_exactly_whatever_the_umask_and_whatever_was_there(tmp_path: Path) -> None:
    private, loose = tmp_path / "private.json", tmp_path / "loose"
    loose.write_text("old")
    loose.chmod(0o600)
    with umask(0o077):
        write_path(loose, b"new", mode=0o755)
    with umask(0):
        write_path(private, b"{}", mode=0o600)
    assert (mode_of(private), mode_of(loose)) == (0o600, 0o755)


def test_a_symlink_under_the_name_is_replaced_never_followed(tmp_path: Path) -> None:
    (tmp_path / "target.txt").write_text("the link's target")
    (tmp_path / "link").symlink_to("target.txt")
    write_path(tmp_path / "link", b"written")
    assert not (tmp_path / "link").is_symlink() and (tmp_path / "link").read_text() == "written"
    assert (tmp_path / "target.txt").read_text() == "the link's target"
    assert mode_of(tmp_path / "link") == 0o644 & ~current_umask()  # the link's bits are not kept


def test_a_link_can_replace_a_file_the_same_way(tmp_path: Path) -> None:
    (tmp_path / "entry").write_text("a file")
    with opened(tmp_path) as folder:
        link_in_folder(folder, "entry", "elsewhere", temp_suffix=".undo-tmp")
    assert os.readlink(tmp_path / "entry") == "elsewhere"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["entry"]


def test_the_tools_write_through_a_link_inside_the_workspace_into_its_target(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("old")
    (tmp_path / "alias.txt").symlink_to("real.txt")
    atomic_write(Path("alias.txt"), "new", root=tmp_path)
    assert (tmp_path / "alias.txt").is_symlink() and (tmp_path / "real.txt").read_text() == "new"


def test_a_write_failing_half_way_leaves_the_old_file_and_no_temp(tmp_path: Path) -> None:
    """A real failure after some bytes are written: the file size limit (RLIMIT_FSIZE) stops the write."""
    target = tmp_path / "big.bin"
    target.write_bytes(b"original")
    child = run_python(
        """
        import errno, resource, signal, sys
        from pathlib import Path
        from paicli.common.atomic_write import write_path
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit then fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, resource.RLIM_INFINITY))
        try:
            write_path(Path(sys.argv[1]), b"x" * (1 << 20))
        except OSError as error:
            print(errno.errorcode[error.errno])
        """,
        str(target),
    )
    out, err = child.communicate(timeout=60)
    assert out.strip() == "EFBIG", err
    assert target.read_bytes() == b"original"
    assert leftovers(tmp_path) == []


def test_an_interrupt_at_any_moment_leaves_the_old_or_the_new_file_and_no_temp(tmp_path: Path) -> None:
    """SIGINT (KeyboardInterrupt) at random moments of a writer that writes in a loop: never a torn file,
    never a temp file left (only SIGKILL may leave one)."""
    size = 2 << 20
    target = tmp_path / "target.bin"
    rng = random.Random(28)
    interrupted = 0
    for _ in range(8):
        target.write_bytes(b"o" * size)
        writer = run_python(
            """
            import sys
            from pathlib import Path
            from paicli.common.atomic_write import write_path
            target, size, n = Path(sys.argv[1]), int(sys.argv[2]), 0
            while True:
                write_path(target, (b"A" if n % 2 else b"B") * size)
                n += 1
                if n == 1:
                    print("writing", flush=True)
            """,
            str(target),
            str(size),
        )
        assert writer.stdout is not None and writer.stdout.readline().strip() == "writing"
        time.sleep(rng.uniform(0, 0.05))
        writer.send_signal(signal.SIGINT)
        _, err = writer.communicate(timeout=60)
        interrupted += "KeyboardInterrupt" in err
        assert target.read_bytes() in (b"o" * size, b"A" * size, b"B" * size)
        assert leftovers(tmp_path) == []
    assert interrupted == 8


READER = """
    import sys
    from pathlib import Path
    target, size = Path(sys.argv[1]), int(sys.argv[2])
    whole = {b"A" * size, b"B" * size}
    reads = torn = 0
    print("reading", flush=True)
    while not Path(sys.argv[3]).exists():
        reads += 1
        torn += target.read_bytes() not in whole
    print(reads, torn)
"""


def test_a_reader_never_sees_a_partial_file(tmp_path: Path) -> None:
    size = 128 * 1024  # a plain write_bytes of this size is seen torn in most reads here
    target, stop = tmp_path / "shared.bin", tmp_path / "stop"
    write_path(target, b"A" * size)
    reader = run_python(READER, str(target), str(size), str(stop))
    assert reader.stdout is not None and reader.stdout.readline().strip() == "reading"
    try:
        for n in range(100):
            write_path(target, (b"A" if n % 2 else b"B") * size)
    finally:
        stop.touch()
    out, err = reader.communicate(timeout=60)
    reads, torn = map(int, out.split())
    assert reads > 0 and torn == 0, err


async def test_a_cancelled_task_leaves_the_write_whole(tmp_path: Path) -> None:
    """From async code the write runs in a thread: cancelling the task that awaits it cannot stop it half way."""
    size = 1 << 20
    target = tmp_path / "t.bin"
    target.write_bytes(b"o" * size)
    rng = random.Random(7)
    for n in range(30):
        task = asyncio.create_task(asyncio.to_thread(write_path, target, (b"A" if n % 2 else b"B") * size))
        await asyncio.sleep(rng.uniform(0, 0.01))
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        assert target.read_bytes() in (b"o" * size, b"A" * size, b"B" * size)
    await asyncio.get_running_loop().shutdown_default_executor()  # the cancelled ones' threads finish
    assert leftovers(tmp_path) == []


def test_the_folder_is_fsynced_after_the_rename(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Watches the real fsync calls (they still happen): the file's, then its folder's once the new content
    is in place, so a crash after the call returns cannot bring the old file back."""
    target = tmp_path / "durable.txt"
    target.write_text("old")
    real_fsync = os.fsync
    seen: list[tuple[str, str]] = []

    def watched(fd: int) -> None:
        kind = "folder" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file"
        seen.append((kind, target.read_text()))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", watched)
    write_path(target, b"new")
    assert seen == [("file", "old"), ("folder", "new")]


def test_leftovers_of_one_writer_are_removed_and_no_others(tmp_path: Path) -> None:
    for name in (".a.txt.0badf00d.paicli-undo", ".a.txt.0badf00d.paicli-tmp", ".b.txt.0badf00d.paicli-undo", "a.txt"):
        (tmp_path / name).write_text("x")
    with opened(tmp_path) as folder:
        remove_leftovers(folder, "a.txt", temp_suffix=".paicli-undo")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".a.txt.0badf00d.paicli-tmp",
        ".b.txt.0badf00d.paicli-undo",
        "a.txt",
    ]


def test_a_long_name_still_gets_a_temp_name_that_fits(tmp_path: Path) -> None:
    write_path(tmp_path / ("n" * 255), b"x")
    assert (tmp_path / ("n" * 255)).read_bytes() == b"x"
