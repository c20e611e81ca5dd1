"""Issue 19, class 6: a folder flipped between absent, real, and a symlink to the outside while the file
tools work on paths through it.

A separate process flips `ws/d` as fast as it can; meanwhile hundreds of write_file, edit_file and
read_file calls go through the real tool box and policy. Nothing may be created or changed in the
outside folder, and nothing of it may be read. A control first shows that the same flipping does
send a check-then-write (the guard, then an ordinary path-based write) outside, so the test can see
the race it is about.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from paicli.tools.base import ToolFailure, ToolOutcome
from paicli.tools.guard import resolve_in_workspace
from tests.security.conftest import Session

CALLS_EACH = 120  # of write_file, edit_file and read_file: 360 calls
SECRET = "outside-secret-5f1c"

FLIPPER = """
import os, sys
folder, outside = sys.argv[1], sys.argv[2]
graveyard = folder + "-old"
os.makedirs(graveyard, exist_ok=True)
print("flipping", flush=True)
n = 0
while True:
    n += 1
    try:
        if n % 3 == 0:  # a real folder for a moment, with a file to edit
            os.mkdir(folder)
            with open(os.path.join(folder, "e.txt"), "w") as f:
                f.write("inside e\\n")
        else:  # a symlink to the outside for a moment, then nothing
            os.symlink(outside, folder)
            os.unlink(folder)
            continue
    except FileExistsError:
        pass  # a real folder someone else made: moved away below
    except OSError:
        continue
    try:
        os.rename(folder, os.path.join(graveyard, str(n)))
    except OSError:
        pass
"""


FILE_FLIPPER = """
import os, sys
link, secret = sys.argv[1], sys.argv[2]
print("flipping", flush=True)
while True:
    for make in (lambda: os.symlink(secret, link), lambda: open(link, "w").write("inside e\\n")):
        try:
            make()
            os.unlink(link)
        except OSError:
            pass
"""


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "e.txt").write_text("outside e\n")
    (folder / "secret.txt").write_text(SECRET + "\n")
    return folder


@contextmanager
def flipper(program: str, *args: Path) -> Iterator[None]:
    command = [sys.executable, "-c", program, *map(str, args)]
    flipper = subprocess.Popen(command, stdout=subprocess.PIPE)
    assert flipper.stdout is not None and flipper.stdout.readline() == b"flipping\n"
    try:
        yield
    finally:
        flipper.kill()
        flipper.wait()


@pytest.fixture
def flipping(workspace: Path, outside: Path) -> Iterator[None]:
    with flipper(FLIPPER, workspace / "d", outside):
        yield


def untouched(outside: Path) -> bool:
    return sorted(os.listdir(outside)) == ["e.txt", "secret.txt"] and (outside / "e.txt").read_text() == "outside e\n"


def test_control_a_check_then_write_does_escape(workspace: Path, outside: Path, flipping: Any) -> None:
    escaped = 0
    for i in range(20_000):
        try:
            path = resolve_in_workspace(workspace, f"d/naive{i}.txt", for_write=True)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("x")
        except (ToolFailure, OSError):
            continue
        escaped = len([name for name in os.listdir(outside) if name.startswith("naive")])
        if escaped:
            break
    assert escaped, "the flipping never beat a check-then-write; the race test below proves nothing"


async def test_no_file_tool_call_lands_or_reads_outside(
    session_factory: Any, workspace: Path, outside: Path, flipping: Any
) -> None:
    session: Session = session_factory("auto")

    async def write(i: int) -> ToolOutcome:
        return await session.call("write_file", path=f"d/w{i}.txt", content=f"written {i}\n")

    async def edit(i: int) -> ToolOutcome:
        return await session.call("edit_file", path="d/e.txt", old_text=" e\n", new_text=f" e{i}\n")

    async def read(i: int) -> ToolOutcome:
        return await session.call("read_file", path="d/secret.txt" if i % 2 else "d/e.txt")

    outcomes: list[ToolOutcome] = []
    for i in range(CALLS_EACH):
        outcomes += await asyncio.gather(write(i), edit(i), read(i))

    assert untouched(outside), sorted(os.listdir(outside))
    assert not any(SECRET in outcome.output for outcome in outcomes)
    assert sum(outcome.ok for outcome in outcomes) > 0, "nothing got through at all"
    assert all(len(outcome.output.splitlines()) == 1 for outcome in outcomes if not outcome.ok)


async def test_a_file_flipped_with_a_symlink_out_is_never_read_or_written_through(
    session_factory: Any, workspace: Path, outside: Path
) -> None:
    session: Session = session_factory("auto")
    outcomes: list[ToolOutcome] = []
    with flipper(FILE_FLIPPER, workspace / "f.txt", outside / "e.txt"):
        for i in range(CALLS_EACH):
            outcomes += await asyncio.gather(
                session.call("read_file", path="f.txt"),
                session.call("edit_file", path="f.txt", old_text=" e\n", new_text=f" e{i}\n"),
                session.call("write_file", path="f.txt", content=f"written {i}\n"),
            )
    assert untouched(outside), (outside / "e.txt").read_text()
    assert not any("outside e" in outcome.output for outcome in outcomes)
    assert sum(outcome.ok for outcome in outcomes) > 0
