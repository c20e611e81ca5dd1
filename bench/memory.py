"""13. Memory (issue 16, item 5): the peak RSS of a 50-task plan, how the REPL's RSS grows over 500
chat turns in one session, and what a long prompt history costs it.

The plan: `paicli plan GOAL --yes --json --max-parallel 4 --no-review` as a subprocess against the fake
model server: a 50-task DAG (10 levels of 5, each task after one or two of the level before), every task
reading a workspace file (`read_file`) and then answering, then the summary. Its peak RSS is its VmHWM
(/proc/PID/status) read every 10 ms while it runs; `ru_maxrss` would not do: a child's counts the pages
of the parent it was forked from. The review is left out: one more tool-free request.

The history: the REPL after one turn with a workspace history of 50,000 entries (about 11 MB, years of
use) and with none, twice each: the prompt's history is capped (paicli/ui/prompt/history.py), the first start
cuts the file, the next one starts from the cut file.

The chat: the REPL in a pseudo-terminal (bench/chat_session.py) with the default settings, so compression
starts where a user's would (64,000 tokens); each turn reads a 4 KB file and answers 1.5 KB of Markdown.
Its RSS (/proc/PID/status) is read every 50 turns; the growth counted is from turn 50 to the last, so what
start-up and the first compressions load once is left out. A leak (a list of every turn's events, screens
or messages) would grow it by every turn's size: about 6 KB × 450 turns ≈ 2.7 MB of text, much more as
Python objects.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.chat_session import memory_kb, repl_session, script
from bench.common import REPO, Result
from paicli.ui.prompt.history import history_path
from tests.fakellm import Body, FakeLLM, Reply
from tests.plan_script import PLANNER, SUMMARIZER, system_is

NAME = "memory"
TITLE = "Memory: a 50-task plan's peak RSS, and 500 chat turns in one REPL"
LEVELS, WIDTH = 10, 5
HISTORY_ENTRIES = 50_000  # of about 190 characters: years of use of one workspace
SAMPLES = 10  # RSS readings across the chat, after the one at its start


def layered_plan(levels: int = LEVELS, width: int = WIDTH) -> str:
    """A plan reply: `levels` × `width` tasks, each after one or two tasks of the level before."""
    tasks = []
    for level in range(levels):
        for index in range(width):
            before = [] if level == 0 else sorted({f"t{level - 1}_{index}", f"t{level - 1}_{(index + 1) % width}"})
            tasks.append(
                {
                    "id": f"t{level}_{index}",
                    "description": f"explain part {index} of level {level}",
                    "type": "ANALYSIS",
                    "dependencies": before,
                }
            )
    return json.dumps({"summary": "explain every part", "tasks": tasks})


def _task_request(last_role: str) -> Callable[[Body], bool]:
    def predicate(body: Body) -> bool:
        messages = body.get("messages") or [{}]
        return bool(body.get("tools")) and messages[-1].get("role") == last_role

    return predicate


def plan_peak_kb(fake: FakeLLM, folder: Path, *, levels: int, width: int, max_parallel: int = 4) -> tuple[int, int]:
    """Runs the plan; returns (peak RSS in KB, tasks finished)."""
    fake.on(system_is(PLANNER), Reply.text(layered_plan(levels, width)), repeat=True)
    fake.on(system_is(SUMMARIZER), Reply.text("Every part is explained."), repeat=True)
    fake.on(_task_request("user"), Reply.tool_calls([("read_file", {"path": "notes.md"})]), repeat=True)
    fake.on(_task_request("tool"), Reply.text("The part reads its input and checks it."), repeat=True)
    home, workspace = folder / "home", folder / "workspace"
    home.mkdir(parents=True)
    workspace.mkdir(parents=True)
    (workspace / "notes.md").write_text("Each part reads its input and checks it.\n" * 100)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PAICLI_", "OPENAI_"))}
    env.update(HOME=str(home), PAICLI_API_KEY="bench-key-0000", PAICLI_BASE_URL=fake.base_url)
    command = [
        sys.executable,
        "-m",
        "paicli",
        "-C",
        str(workspace),
        "plan",
        "explain every part",
        "--yes",
        "--json",
        "--no-review",
        "--max-parallel",
        str(max_parallel),
    ]
    out = folder / "events.jsonl"
    with out.open("w") as events:
        child = subprocess.Popen(command, cwd=REPO, env=env, stdout=events, stderr=subprocess.DEVNULL)
        peak = 0
        while child.poll() is None:
            peak = max(peak, memory_kb(child.pid)[1])
            time.sleep(0.01)
    if child.returncode != 0:
        raise RuntimeError(f"the benchmark plan exited {child.returncode}: {out.read_text()[-2000:]}")
    finished = [json.loads(line) for line in out.read_text().splitlines() if '"task_finished"' in line]
    return peak, len(finished)


def chat_curve(fake: FakeLLM, folder: Path, turns: int) -> list[tuple[int, int, int]]:
    """(turn, RSS KB, peak RSS KB) at the start and SAMPLES times across the turns."""
    every = max(1, turns // SAMPLES)
    script(fake, turns, answer_chars=1500)
    curve = []
    with repl_session(fake, folder, note_chars=4000) as session:
        curve.append((0, *session.memory_kb()))
        for number in range(1, turns + 1):
            session.turn(number)
            if number % every == 0 or number == turns:
                curve.append((number, *session.memory_kb()))
                fake.forget_requests()  # the server's log is not what is measured
    return curve


def history_entry(index: int) -> str:
    return f"entry {index}: explain how the parser closes its blocks and why " * 3


def write_history(path: Path, entries: int) -> None:
    """`entries` entries in prompt_toolkit's history format (a dated header, each line prefixed with "+")."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as history:
        for index in range(entries):
            history.write(f"\n# 2026-11-30 10:00:00.000000\n+{history_entry(index)}\n")


def rss_with_history(folder: Path, entries: int, sessions: int = 1) -> tuple[list[int], int]:
    """The REPL's RSS in KB after one turn, in each of `sessions` sessions one after the other, its workspace
    history holding `entries` entries at the start; and the entries left in the history file at the end."""
    path = history_path(folder / "home", folder / "workspace")
    write_history(path, entries)
    rss = []
    for _ in range(sessions):
        with FakeLLM() as fake:
            script(fake, 1, answer_chars=1500)
            with repl_session(fake, folder, note_chars=4000) as session:
                session.turn(1)
                rss.append(session.memory_kb()[0])
    return rss, sum(1 for line in path.read_text().splitlines() if line.startswith("# "))


def run(quick: bool = False) -> Result:
    levels, turns = (2, 10) if quick else (LEVELS, 500)
    result = Result(NAME, TITLE, details={"plan_tasks": levels * WIDTH, "turns": turns})
    with FakeLLM() as fake, tempfile.TemporaryDirectory() as folder:
        peak, finished = plan_peak_kb(fake, Path(folder) / "plan", levels=levels, width=WIDTH)
    result.add(f"{levels * WIDTH}-task plan, 4 parallel: tasks finished", finished)
    result.add(f"{levels * WIDTH}-task plan, 4 parallel: peak RSS", peak / 1024, "MB", at_most=150.0)
    with FakeLLM() as fake, tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        curve = chat_curve(fake, Path(folder), turns)
        seconds = time.perf_counter() - start
    (first, first_rss, _), (last, last_rss, _) = curve[1], curve[-1]
    result.add(f"{turns} chat turns: RSS after turn {first}", first_rss / 1024, "MB")
    result.add(f"{turns} chat turns: RSS after turn {last}", last_rss / 1024, "MB")
    result.add(
        f"{turns} chat turns: RSS after turn {last} beyond after turn {first}",
        (last_rss - first_rss) / 1024,
        "MB",
        at_most=20.0,
    )  # may be < 0: RSS can shrink
    result.add(f"{turns} chat turns: peak RSS", max(peak for _, _, peak in curve) / 1024, "MB")
    result.add(f"{turns} chat turns: per turn", seconds / turns * 1000, "ms")
    entries = 2_000 if quick else HISTORY_ENTRIES
    with tempfile.TemporaryDirectory() as empty, tempfile.TemporaryDirectory() as full:
        (without, _), (starts, left) = rss_with_history(Path(empty), 0, 2), rss_with_history(Path(full), entries, 2)
    size = entries * (len(history_entry(entries)) + 32) / 1e6
    for label, index in (("first start", 0), ("next start", 1)):
        beyond = (starts[index] - without[index]) / 1024
        result.add(f"REPL with a {entries:,}-entry history ({size:.1f} MB), {label}: RSS beyond none", beyond, "MB")
    result.add(f"REPL with a {entries:,}-entry history: entries left in the file", left)
    result.details["rss_curve_mb"] = [
        {"turn": t, "rss": round(r / 1024, 1), "peak": round(p / 1024, 1)} for t, r, p in curve
    ]
    return result
