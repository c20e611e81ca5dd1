"""13. Memory: the peak RSS of a 50-task plan, and how RSS grows over a long chat in one REPL session.

Plan: a fresh interpreter (`python -m bench.memory plan`) runs a random layered plan of 50 tasks through
the real Scheduler, the ReAct task runner and the client (bench/harness.py) against the fake server in a
process of its own, 4 tasks at a time, saving the plan as `paicli plan` does; it reports its peak RSS
(`ru_maxrss`), everything it imported included. Target ≤ 150 MB.

Chat: the real `paicli` REPL in a pseudo-terminal against the fake server, one scripted turn after another
(each reply a few hundred characters of Markdown with a code fence, streamed); the REPL process's VmRSS
from /proc after turn 50 and after the last (500). Growth after the first 50 turns: target ≤ 20 MB (no
leak in the transcript, the live view or the event sinks; the conversation itself, a few hundred KB of
text, stays).
"""

from __future__ import annotations

import asyncio
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import pexpect

from bench.common import REPO, Result, rounded
from bench.fakeserver import ServerProcess
from bench.graphs import random_layered
from bench.harness import assert_completed, make_plan, react_runner, run_plan, runtime_for
from tests.fakellm import FakeLLM, Reply, any_request

NAME = "memory"
TITLE = "Memory"
PROMPT = "› "
REPLY = (
    "Here is what changed in `module.py`: the loader now caches its result.\n\n"
    "```python\ndef load(path):\n    return cache.setdefault(path, read(path))\n```\n\n"
    "- the cache is cleared by `reset()`\n- tests call it between cases\n\nDone: turn {turn}."
)


def _plan_peak_mb(tasks: int) -> float:
    """In this (fresh) process: runs the plan, returns the peak RSS in MB."""
    graph, latencies = random_layered(tasks=tasks, layers=8, seed=50)
    with ServerProcess({task: 0.01 for task in latencies}) as server, tempfile.TemporaryDirectory() as folder:

        async def main() -> None:
            async with runtime_for(server.base_url, Path(folder)) as runtime:
                plan = make_plan(graph)
                await run_plan(runtime, react_runner(runtime), plan, max_parallel=4, save=True)
                assert_completed(plan)

        asyncio.run(main())
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KB on Linux


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def chat_rss(turns: int, after: int) -> tuple[float, float, float]:
    """RSS of a REPL session (MB) after its first prompt, after `after` turns and after `turns` turns."""
    with FakeLLM() as fake, tempfile.TemporaryDirectory() as folder:
        home, workspace = Path(folder) / "home", Path(folder) / "workspace"
        home.mkdir()
        workspace.mkdir()
        fake.on(any_request, *(Reply.text(REPLY.format(turn=turn)) for turn in range(1, turns + 1)))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PAICLI_", "OPENAI_"))}
        env.update(HOME=str(home), TERM="xterm", LANG="C.UTF-8", PAICLI_API_KEY="bench-key-0000",
                   PAICLI_BASE_URL=fake.base_url, PROMPT_TOOLKIT_NO_CPR="1")  # fmt: skip
        child = pexpect.spawn(sys.executable, ["-m", "paicli", "-C", str(workspace)], cwd=str(REPO), env=env,
                              encoding="utf-8", codec_errors="replace", timeout=60, dimensions=(40, 120))  # fmt: skip
        try:
            child.expect_exact(PROMPT)
            start = middle = _rss_mb(child.pid)
            for turn in range(1, turns + 1):
                child.send(f"step {turn}\r")
                child.expect_exact(f"Done: turn {turn}.")
                child.expect_exact(PROMPT)
                if turn == after:
                    middle = _rss_mb(child.pid)
            end = _rss_mb(child.pid)
            child.sendcontrol("d")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
    return start, middle, end


def run(quick: bool = False) -> Result:
    tasks, turns, after = (8, 12, 4) if quick else (50, 500, 50)
    done = subprocess.run([sys.executable, "-m", "bench.memory", "plan", str(tasks)], cwd=REPO, capture_output=True,
                          text=True, check=True, timeout=600)  # fmt: skip
    peak = float(done.stdout.strip())
    start, middle, end = chat_rss(turns, after)
    result = Result(NAME, TITLE, details={"plan_tasks": tasks, "chat_turns": turns, "measured_after": after})
    result.add(f"plan of {tasks} tasks, 4 at a time: peak RSS", peak, "MB", at_most=150.0)
    result.add("REPL at its first prompt: RSS", start, "MB")
    result.add(f"REPL after {after} turns: RSS", middle, "MB")
    result.add(f"REPL after {turns} turns: RSS", end, "MB")
    result.add(f"REPL: RSS after {turns} turns beyond after {after}", end - middle, "MB", at_most=20.0)  # may be < 0
    result.details["rss_mb"] = {"prompt": rounded(start), after: rounded(middle), turns: rounded(end)}
    return result


if __name__ == "__main__":
    if sys.argv[1:2] == ["plan"]:
        print(_plan_peak_mb(int(sys.argv[2])))
