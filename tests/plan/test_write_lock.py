"""Two tasks never write the same file at the same time: the per-path lock shared by a plan's tasks.

The write itself is slowed down (fault injection on atomic_write) so that overlaps would be visible in
the recorded time spans; writes to different files must still overlap, which shows the check can fail.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest

from paicli.llm.types import ToolCall
from paicli.tools.atomic import atomic_write
from paicli.tools.base import PathLocks, ToolContext
from paicli.tools.builtin import write_file
from paicli.tools.toolbox import ToolBox


@pytest.fixture
def slow_writes(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, float, float]]:
    spans: list[tuple[str, float, float]] = []
    guard = threading.Lock()

    def slow_atomic_write(path: Path, data: bytes | str, **kwargs: object) -> None:
        start = time.monotonic()
        time.sleep(0.3)
        atomic_write(path, data)
        with guard:
            spans.append((path.name, start, time.monotonic()))

    monkeypatch.setattr(write_file, "atomic_write", slow_atomic_write)
    return spans


def overlapping(spans: list[tuple[str, float, float]]) -> bool:
    (_, a0, a1), (_, b0, b1) = spans
    return a0 < b1 and b0 < a1


async def write_twice(workspace: Path, first: str, second: str) -> None:
    locks = PathLocks()  # one per plan: every task's ToolContext shares it
    box = ToolBox.default()
    calls = [
        (ToolCall(id=f"c{n}", name="write_file", arguments=f'{{"path": "{path}", "content": "from {n}"}}'), n)
        for n, path in enumerate((first, second))
    ]
    outcomes = await asyncio.gather(
        *(box.execute(call, ToolContext(workspace=workspace, task_id=f"task_{n}", locks=locks)) for call, n in calls)
    )
    assert all(o.ok for o in outcomes), outcomes


async def test_same_file_writers_take_turns(workspace: Path, slow_writes: list[tuple[str, float, float]]) -> None:
    await write_twice(workspace, "shared.txt", "./shared.txt")
    assert len(slow_writes) == 2 and not overlapping(slow_writes)
    assert (workspace / "shared.txt").read_text() in ("from 0", "from 1")


async def test_different_files_are_written_in_parallel(
    workspace: Path, slow_writes: list[tuple[str, float, float]]
) -> None:
    await write_twice(workspace, "one.txt", "two.txt")
    assert overlapping(slow_writes)
