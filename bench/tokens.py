"""6. Tokens and calls vs ReAct: one scripted 8-task job done by `paicli plan --yes` and by `paicli run`.

The job: review four source files of a workspace (fan-out reads), two analyses (a.py with b.py, c.py
with d.py), write REVIEW.md, verify it. Both commands run for real as subprocesses against the fake
server, with the same fixed latency per reply and the same texts written by the "model":

- plan (`paicli plan GOAL --yes --json --no-review`): one planner request, then per task a ReAct loop of
  its own (reads: read_file then the answer; analyses: the answer; write: write_file then the answer;
  verification: execute_command then the answer), then the summary request. Each task sees the goal, its
  task and its direct dependencies' results.
- ReAct (`paicli run GOAL --json`): one conversation carrying its whole history, one tool call per step,
  the way a one-step-at-a-time agent works: four reads, the write (with the analyses as its text), the
  check, the final answer.

Prompt and completion tokens are what paicli reports (`plan_finished` / `run_finished`; the fake counts
a prompt as len(JSON of messages + tools) / 4). The prefix share is, for each task's first request, the
part of its prompt (tool schemas, then messages) that is byte-identical in all tasks' first requests:
what a provider's prompt cache can reuse.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench.common import REPO, Result, median, rounded
from tests.fakellm import Body, FakeLLM, Reply, all_of, has_tool_result
from tests.plan_script import PLANNER, SUMMARIZER, system_is, task_is

NAME = "tokens"
TITLE = "Tokens and calls: plan vs ReAct"
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


PLAN = json.dumps(
    {
        "summary": "Review the four modules and write REVIEW.md",
        "tasks": [
            *(
                {
                    "id": f"task_{n}",
                    "description": f"Read src/{m}.py and summarize its functions and TODOs",
                    "type": "FILE_READ",
                    "dependencies": [],
                }
                for n, m in enumerate(MODULES, start=1)
            ),
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
            {
                "id": "task_7",
                "description": "Write REVIEW.md with one bullet per finding",
                "type": "FILE_WRITE",
                "dependencies": ["task_5", "task_6"],
                "files": ["REVIEW.md"],
            },
            {
                "id": "task_8",
                "description": "Check that REVIEW.md exists and lists the findings",
                "type": "VERIFICATION",
                "dependencies": ["task_7"],
            },
        ],
    },
    indent=2,
)
CHECK = "grep -c '^- ' REVIEW.md"


def script_plan(fake: FakeLLM, size: int, latency: float) -> None:
    fake.on(system_is(PLANNER), Reply.text(PLAN, latency=latency))
    fake.on(system_is(SUMMARIZER), Reply.text(SUMMARY, latency=latency))
    for n, module in enumerate(MODULES, start=1):
        tid = f"task_{n}"
        fake.on(all_of(task_is(tid), has_tool_result()), Reply.text(read_result(module, size), latency=latency))
        fake.on(task_is(tid), Reply.tool_calls([("read_file", {"path": f"src/{module}.py"})], latency=latency))
    for tid, text in ANALYSIS.items():
        fake.on(task_is(tid), Reply.text(text, latency=latency))
    fake.on(
        all_of(task_is("task_7"), has_tool_result()), Reply.text("Wrote REVIEW.md with 6 findings.", latency=latency)
    )
    fake.on(
        task_is("task_7"), Reply.tool_calls([("write_file", {"path": "REVIEW.md", "content": REVIEW})], latency=latency)
    )
    fake.on(
        all_of(task_is("task_8"), has_tool_result()), Reply.text("REVIEW.md lists 6 findings: PASS.", latency=latency)
    )
    fake.on(task_is("task_8"), Reply.tool_calls([("execute_command", {"command": CHECK})], latency=latency))


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
    wall: float
    bodies: list[Body]


def run_job(mode: str, size: int, latency: float) -> Outcome:
    with FakeLLM() as fake, tempfile.TemporaryDirectory() as folder:
        workspace, home = Path(folder) / "workspace", Path(folder) / "home"
        (workspace / "src").mkdir(parents=True)
        (home / ".paicli").mkdir(parents=True)
        for module in MODULES:
            (workspace / "src" / f"{module}.py").write_text(source_file(module, size))
        if mode == "plan":
            script_plan(fake, size, latency)
            args = ["plan", GOAL, "--yes", "--json", "--no-review"]
        else:
            script_react(fake, latency)
            args = ["run", GOAL, "--json"]
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
        bodies = [r.body for r in fake.requests if r.body is not None]
        return Outcome(usage["prompt_tokens"], usage["completion_tokens"], len(fake.requests), wall, bodies)


def prefix_shares(bodies: list[Body]) -> tuple[list[float], int]:
    """For each task's first request, the share of its prompt that all tasks' first requests have in common;
    and the length of that common prefix in characters."""
    firsts: dict[str, str] = {}
    for body in bodies:
        for n in range(1, 9):
            if task_is(f"task_{n}")(body) and f"task_{n}" not in firsts:
                firsts[f"task_{n}"] = json.dumps(body.get("tools") or []) + json.dumps(body["messages"])
    prompts = list(firsts.values())
    shared = common_prefix_length(prompts)
    return [shared / len(prompt) for prompt in prompts], shared


def common_prefix_length(texts: list[str]) -> int:
    """Characters at the start that every text has in common."""
    shortest, longest = min(texts), max(texts)  # the lexicographic extremes bound every other text
    length = 0
    while length < len(shortest) and shortest[length] == longest[length]:
        length += 1
    return length


def run(quick: bool = False) -> Result:
    sizes, headline, latency, rounds = ([2048], 2048, 0.01, 1) if quick else ([3 * 1024, 12 * 1024], 12 * 1024, 0.25, 3)
    result = Result(NAME, TITLE, details={"latency_s": latency, "rounds": rounds})
    for size in sizes:
        runs: dict[str, list[Outcome]] = {"plan": [], "react": []}
        for _ in range(rounds if size == headline else 1):
            for mode in runs:
                runs[mode].append(run_job(mode, size, latency))
        plan, react = runs["plan"][0], runs["react"][0]
        label = f"{size // 1024} KB files"
        ratio = plan.prompt_tokens / react.prompt_tokens
        result.add(f"{label}: plan ÷ ReAct prompt tokens", ratio, at_most=round(1 / 3, 3))
        result.details[label] = {
            mode: {
                "prompt_tokens": outcome[0].prompt_tokens,
                "completion_tokens": outcome[0].completion_tokens,
                "requests": outcome[0].requests,
                "wall_s": [rounded(o.wall) for o in outcome],
            }
            for mode, outcome in runs.items()
        }
        if size != headline:
            continue
        for mode, outcome in (("plan", plan), ("ReAct", react)):
            result.add(
                f"{label}: {mode} prompt / completion tokens",
                f"{outcome.prompt_tokens:,} / {outcome.completion_tokens:,}",
            )
            result.add(f"{label}: {mode} requests", outcome.requests)
        plan_wall, react_wall = median([o.wall for o in runs["plan"]]), median([o.wall for o in runs["react"]])
        result.add(f"{label}: plan ÷ ReAct wall time ({latency:g} s per reply)", plan_wall / react_wall)
        shares, shared = prefix_shares(plan.bodies)
        result.add(
            f"{label}: prefix shared by all tasks, median (min)",
            f"{100 * median(shares):.0f} % ({100 * min(shares):.0f} %)",
        )
        result.details[label]["plan"]["prefix_share_per_task"] = [rounded(s) for s in shares]
        result.details[label]["plan"]["shared_prefix_tokens"] = shared // 4
    return result
