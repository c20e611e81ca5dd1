"""Files are never torn: cancelled writes and edits, a writer killed with SIGKILL, and edits that keep the
file's line endings, BOM and mode bits. Unit tests of the atomic write: tests/tools/test_atomic.py."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

from paicli.llm.types import ToolCall
from paicli.tools.base import ToolContext
from paicli.tools.toolbox import ToolBox

SIZE = 256 * 1024
TRIALS = 100


async def call(box: ToolBox, ctx: ToolContext, name: str, **arguments: str) -> None:
    await box.execute(ToolCall(id="c", name=name, arguments=json.dumps(arguments)), ctx)


async def cancel_soon(box: ToolBox, ctx: ToolContext, rng: random.Random, name: str, **arguments: str) -> None:
    task = asyncio.create_task(call(box, ctx, name, **arguments))
    await asyncio.sleep(rng.uniform(0, 0.004))
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


async def test_cancelling_writes_and_edits_never_leaves_a_torn_file(tmp_path: Path) -> None:
    box, ctx, rng = ToolBox.default(), ToolContext(tmp_path), random.Random(1234)
    written, edited = tmp_path / "written.txt", tmp_path / "edited.txt"
    old, new_a, new_b = "old\n" * 10, "A" * SIZE, "B" * SIZE
    body = "x" * SIZE
    written.write_text(old)
    edited.write_text("state: 0\n" + body)
    write_states = {old, new_a, new_b}
    edit_states = {"state: 0\n" + body, "state: 1\n" + body}
    torn = 0
    for trial in range(TRIALS):
        await cancel_soon(box, ctx, rng, "write_file", path="written.txt", content=new_a if trial % 2 else new_b)
        torn += written.read_text() not in write_states
        current = edited.read_text()[:8]
        flipped = "state: 1" if current == "state: 0" else "state: 0"
        await cancel_soon(box, ctx, rng, "edit_file", path="edited.txt", old_text=current, new_text=flipped)
        torn += edited.read_text() not in edit_states
    # a cancelled call's thread may still be finishing its write: wait for every one of them
    await asyncio.get_running_loop().shutdown_default_executor()
    assert torn == 0
    assert written.read_text() in write_states and edited.read_text() in edit_states
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".paicli-tmp")] == []


WRITER = """
import asyncio, json, sys
from pathlib import Path
from paicli.llm.types import ToolCall
from paicli.tools.base import ToolContext
from paicli.tools.toolbox import ToolBox

async def main():
    box, ctx = ToolBox.default(), ToolContext(Path(sys.argv[1]))
    n = 0
    while True:
        content = ("A" if n % 2 else "B") * int(sys.argv[2])
        arguments = json.dumps({"path": "target.txt", "content": content})
        outcome = await box.execute(ToolCall(id="c", name="write_file", arguments=arguments), ctx)
        assert outcome.ok, outcome.output
        n += 1
        if n == 1:
            print("writing", flush=True)

asyncio.run(main())
"""


def test_a_writer_killed_with_sigkill_leaves_the_old_or_the_new_content(tmp_path: Path) -> None:
    size = 1024 * 1024
    target = tmp_path / "target.txt"
    valid = {"original\n", "A" * size, "B" * size}
    rng = random.Random(99)
    for _ in range(6):
        target.write_text("original\n")
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(tmp_path), str(size)], stdout=subprocess.PIPE, text=True
        )
        try:
            assert writer.stdout is not None and writer.stdout.readline().strip() == "writing"
            time.sleep(rng.uniform(0, 0.15))
        finally:
            writer.send_signal(signal.SIGKILL)
            writer.wait(timeout=10)
        assert target.read_text() in valid
    # SIGKILL leaves no chance to clean up: a temp file may remain, but never under the target's name
    leftovers = [p.name for p in tmp_path.iterdir() if p.name != "target.txt"]
    assert all(name.startswith(".target.txt.") and name.endswith(".paicli-tmp") for name in leftovers)


async def test_an_edit_keeps_crlf_bom_and_mode_bits_together(tmp_path: Path) -> None:
    script = tmp_path / "run.cmd"
    script.write_bytes(b"\xef\xbb\xbf@echo off\r\necho one\r\necho two\r\n")
    os.chmod(script, 0o750)
    box = ToolBox.default()
    await call(
        box,
        ToolContext(tmp_path),
        "edit_file",
        path="run.cmd",
        old_text="echo one\necho two",
        new_text="echo 1\necho 2\necho 3",
    )
    assert script.read_bytes() == b"\xef\xbb\xbf@echo off\r\necho 1\r\necho 2\r\necho 3\r\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o750
