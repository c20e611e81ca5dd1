"""The job of benchmark 6, scripted on the fake server and run by the real CLI as a subprocess.

The job: review four source files of a workspace (fan-out reads), two analyses (a.py with b.py, c.py with
d.py), write REVIEW.md, verify it. Every way of doing it gets the same texts from the "model":

- plan, model reads (`paicli plan GOAL --yes --json --no-review`): one planner request, then per task a
  ReAct loop of its own (reads: read_file then the answer; analyses: the answer; write: write_file, which
  ends it; verification: execute_command then the answer), then the summary request.
- plan, direct actions: the same plan, but the four reads are `read_file` actions and the check an
  `execute_command` action: those five tasks run without a model request, and each analysis gets the
  raw files of its two reads (capped as every dependency's result is).
- plan, direct, one writer: the shape the planner prompt's example has (and asks for when one writer can
  reason over what was read): the four direct reads, one FILE_WRITE task that gets all four files and
  writes REVIEW.md with the analyses as its text (as ReAct's write step does), the direct check. Three
  model replies one after another (planner, writer, summary) against the 8-task plan's four.
- plan, analyses that read (only for the estimate's calibration, `SHAPES`): the model-reads plan, but each
  analysis reads its two files itself before answering (two requests where the estimate's rule counts one),
  as a careful model does.
- ReAct (`paicli run GOAL --json`): one conversation carrying its whole history, one tool call per step,
  the way a one-step-at-a-time agent works: four reads, the write (with the analyses as its text), the
  check, the final answer.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.common import REPO
from tests.fakellm import Body, FakeLLM, Reply, all_of, has_tool_result
from tests.plan_script import PLANNER, SUMMARIZER, system_is, task_is

GOAL = "Review src/a.py, src/b.py, src/c.py and src/d.py for duplicated logic and open TODOs; write REVIEW.md."
MODULES = ("a", "b", "c", "d")
FINDINGS = [
    "- a.py and b.py repeat the same trim-and-cap logic in every function; extract one helper.",
    "- c.py and d.py repeat it as well; the helper can serve all four modules.",
    "- Every function carries the TODO about duplicate items; none of them handles duplicates.",
    "- The `limit` default (10) is repeated in each signature; make it one module constant.",
    "- Blank items are skipped silently; say so in the docstrings or log the count.",
    "- No module has tests; add one test per helper once it exists.",
]
REVIEW = "# Review of src/\n\n" + "\n".join(FINDINGS) + "\n"
ANALYSIS = {
    "task_5": "a.py and b.py implement the same trim-and-cap step in each function; both leave the duplicate-items "
    "TODO open. One shared helper would remove the copies.",
    "task_6": "c.py and d.py follow the same pattern as a.py and b.py: identical trimming, identical TODO, the same "
    "default limit. The helper proposed for a.py and b.py fits here too.",
}
SUMMARY = "Reviewed src/a.py to src/d.py: REVIEW.md lists 6 findings (duplicated trimming logic, open TODOs)."
CHECK = "grep -c '^- ' REVIEW.md"
JOBS = ("model reads", "direct actions", "direct, one writer")
SHAPES = (*JOBS, "analyses that read")  # the plan shapes the estimate's calibration is measured on


def source_file(module: str, size: int) -> str:
    """Plausible Python of about `size` bytes."""
    parts, number = [f'"""Module {module}: list helpers."""\n\n'], 0
    while sum(map(len, parts)) < size:
        parts.append(
            f"def {module}_step_{number}(items: list[str], limit: int = 10) -> list[str]:\n"
            f'    """Return the first `limit` non-blank items of step {number}, trimmed."""\n'
            f"    kept = [item.strip() for item in items if item.strip()]\n"
            f"    # TODO: handle duplicate items in step {number}\n"
            f"    return kept[:limit]\n\n\n"
        )
        number += 1
    return "".join(parts)


def read_result(module: str, size: int) -> str:
    return (
        f"src/{module}.py ({size // 1024} KB) defines {module}_step_0 … {module}_step_N: each trims the items, skips "
        f"blanks and returns the first `limit` (default 10). Every function has a TODO about duplicate items."
    )


def plan_tasks(job: str) -> list[dict[str, Any]]:
    """The planner's tasks for `job` (one of JOBS); direct jobs read and check with actions (no model request)."""
    direct = job not in ("model reads", "analyses that read")
    reads = []
    for n, module in enumerate(MODULES, start=1):
        read: dict[str, Any] = {
            "id": f"task_{n}",
            "description": f"Read src/{module}.py and summarize its functions and TODOs",
            "type": "FILE_READ",
            "dependencies": [],
        }
        if direct:
            read["description"] = f"Read src/{module}.py"
            read["action"] = {"tool": "read_file", "args": {"path": f"src/{module}.py"}}
        reads.append(read)
    if job == "direct, one writer":
        writer = {
            "id": "task_5",
            "description": "Compare the four modules (duplicated logic, open TODOs) and write REVIEW.md with one "
            "bullet per finding",
            "type": "FILE_WRITE",
            "dependencies": [read["id"] for read in reads],
            "files": ["REVIEW.md"],
        }
        return [*reads, writer, check_task("task_6", "task_5", direct=True)]
    analyses = [
        {
            "id": "task_5",
            "description": "Compare a.py and b.py: duplicated logic, open TODOs",
            "type": "ANALYSIS",
            "dependencies": ["task_1", "task_2"],
        },
        {
            "id": "task_6",
            "description": "Compare c.py and d.py: duplicated logic, open TODOs",
            "type": "ANALYSIS",
            "dependencies": ["task_3", "task_4"],
        },
    ]
    writer = {
        "id": "task_7",
        "description": "Write REVIEW.md with one bullet per finding",
        "type": "FILE_WRITE",
        "dependencies": ["task_5", "task_6"],
        "files": ["REVIEW.md"],
    }
    return [*reads, *analyses, writer, check_task("task_8", "task_7", direct=direct)]


def check_task(task_id: str, after: str, *, direct: bool) -> dict[str, Any]:
    check: dict[str, Any] = {
        "id": task_id,
        "description": "Check that REVIEW.md exists and lists the findings",
        "type": "VERIFICATION",
        "dependencies": [after],
    }
    if direct:
        check["action"] = {"tool": "execute_command", "args": {"command": CHECK}}
    return check


def plan_reply(job: str) -> str:
    summary = "Review the four modules and write REVIEW.md"
    return json.dumps({"summary": summary, "tasks": plan_tasks(job)}, indent=2)


def task_types(job: str) -> dict[str, str]:
    return {task["id"]: task["type"] for task in plan_tasks(job)}


def script_plan(fake: FakeLLM, size: int, latency: float, job: str) -> None:
    fake.on(system_is(PLANNER), Reply.text(plan_reply(job), latency=latency))
    fake.on(system_is(SUMMARIZER), Reply.text(SUMMARY, latency=latency))
    write = [("write_file", {"path": "REVIEW.md", "content": REVIEW})]
    if job == "direct, one writer":
        analysis = "\n\n".join(ANALYSIS.values())
        fake.on(task_is("task_5"), Reply.tool_calls(write, content=analysis, latency=latency))
        return
    if job in ("model reads", "analyses that read"):
        for n, module in enumerate(MODULES, start=1):
            tid = f"task_{n}"
            fake.on(all_of(task_is(tid), has_tool_result()), Reply.text(read_result(module, size), latency=latency))
            fake.on(task_is(tid), Reply.tool_calls([("read_file", {"path": f"src/{module}.py"})], latency=latency))
        done = Reply.text("REVIEW.md lists 6 findings: PASS.", latency=latency)
        fake.on(all_of(task_is("task_8"), has_tool_result()), done)
        fake.on(task_is("task_8"), Reply.tool_calls([("execute_command", {"command": CHECK})], latency=latency))
    for (tid, text), pair in zip(ANALYSIS.items(), (MODULES[:2], MODULES[2:]), strict=True):
        if job == "analyses that read":  # reads both files itself, then answers
            fake.on(all_of(task_is(tid), has_tool_result()), Reply.text(text, latency=latency))
            reads = [("read_file", {"path": f"src/{module}.py"}) for module in pair]
            fake.on(task_is(tid), Reply.tool_calls(reads, latency=latency))
            continue
        fake.on(task_is(tid), Reply.text(text, latency=latency))
    fake.on(task_is("task_7"), Reply.tool_calls(write, latency=latency))


def react_step(step: int) -> Callable[[Body], bool]:
    """Matches the request made after `step` tool results."""
    return lambda body: sum(m.get("role") == "tool" for m in body.get("messages", [])) == step


def script_react(fake: FakeLLM, latency: float) -> None:
    for step, module in enumerate(MODULES):
        fake.on(react_step(step), Reply.tool_calls([("read_file", {"path": f"src/{module}.py"})], latency=latency))
    analysis = "\n\n".join(ANALYSIS.values())
    write = Reply.tool_calls(
        [("write_file", {"path": "REVIEW.md", "content": REVIEW})], content=analysis, latency=latency
    )
    fake.on(react_step(4), write)
    fake.on(react_step(5), Reply.tool_calls([("execute_command", {"command": CHECK})], latency=latency))
    fake.on(react_step(6), Reply.text(SUMMARY, latency=latency))


@dataclass
class Outcome:
    prompt_tokens: int
    completion_tokens: int
    requests: int
    wall: float  # of the whole command
    span: float  # from the first request's start to the last reply's end: the wall time without start-up
    bodies: list[Body]  # in the order the requests started
    estimate: dict[str, int] = field(default_factory=dict)  # plan_finished's estimate (plans only)


def run_job(mode: str, size: int, latency: float, server: Server | None = None) -> Outcome:
    """`mode`: "react", or one of SHAPES (a plan). `server`: one server and HOME kept across runs (what paicli
    remembers of a server, its estimate's calibration included, is per base URL); None: fresh ones."""
    with contextlib.ExitStack() as stack:
        if server is None:
            server = Server(stack.enter_context(FakeLLM()), Path(stack.enter_context(tempfile.TemporaryDirectory())))
        return _run_job(mode, size, latency, server)


@dataclass
class Server:
    """A fake server and a HOME used by several runs, one after another: the server is scripted afresh for each."""

    fake: FakeLLM
    home: Path


@contextlib.contextmanager
def shared_server() -> Iterator[Server]:
    """One server and HOME for several runs (see run_job)."""
    with FakeLLM() as fake, tempfile.TemporaryDirectory() as folder:
        yield Server(fake, Path(folder))


def _run_job(mode: str, size: int, latency: float, server: Server) -> Outcome:
    fake = server.fake
    fake.reset()
    with tempfile.TemporaryDirectory() as folder:
        workspace, home = Path(folder) / "workspace", server.home
        (workspace / "src").mkdir(parents=True)
        (home / ".paicli").mkdir(parents=True, exist_ok=True)
        for module in MODULES:
            (workspace / "src" / f"{module}.py").write_text(source_file(module, size))
        if mode == "react":
            script_react(fake, latency)
            args = ["run", GOAL, "--json"]
        else:
            script_plan(fake, size, latency, mode)
            args = ["plan", GOAL, "--yes", "--json", "--no-review"]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PAICLI_", "OPENAI_"))}
        env.update(
            HOME=str(home), PAICLI_API_KEY="bench-key-0000", PAICLI_BASE_URL=fake.base_url, PAICLI_MODEL="fake-model"
        )
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "paicli", "-C", str(workspace), *args],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
        wall = time.perf_counter() - start
        events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
        final = [e for e in events if e["event"] in ("plan_finished", "run_finished")]
        if done.returncode != 0 or not final or (workspace / "REVIEW.md").read_text() != REVIEW:
            raise RuntimeError(f"paicli {mode} did not do the job (exit {done.returncode}): {done.stderr[-2000:]}")
        usage = final[-1]["usage"]
        records = sorted((r for r in fake.requests if r.body is not None), key=lambda r: r.started)
        bodies = [r.body for r in records if r.body is not None]
        estimate = final[-1].get("estimate") or {}
        span = max(r.finished or r.started for r in records) - records[0].started
        return Outcome(
            usage["prompt_tokens"], usage["completion_tokens"], len(fake.requests), wall, span, bodies, estimate
        )
