"""6. Tokens and calls vs ReAct: one scripted job (bench/token_jobs.py) done by `paicli plan --yes` as an
8-task plan with its reads and check run by the model or as direct actions, as a 6-task plan whose one
writer reasons over the direct reads itself, and by `paicli run`. Wall times at 0.25 s per reply and at
1 s, each beside its reference: the plan's serial replies plus ReAct's fixed costs.

Prompt and completion tokens are what paicli reports (`plan_finished` / `run_finished`; the fake counts
a prompt as len(JSON of messages + tools) / 4). Also reported: model requests per plan task, the plan's
own estimate against what it used, and the prefix share: for each task's first request, the part of its
prompt (tool schemas, then messages) that is byte-identical in all tasks' first requests, what a
provider's prompt cache can reuse. At the headline size, the tool lists of the task requests are
compared (one shared list against a list per task type, bench/prompt_cache.py).

The estimate's calibration (paicli/plan/calibration.py) is measured on four plan shapes (`SHAPES`: the three
plans above and one whose analyses read their files themselves, two requests where the rule counts one):
the estimate ÷ what the run used (without planning) with nothing learned yet, once the three other shapes ran
on the same server (learned from different plans), and once the same shape ran there before; and whether
the run's prompt tokens fell inside the estimate's range.
"""

from __future__ import annotations

import json

from bench.common import Result, median, rounded
from bench.prompt_cache import MIN_CACHED, VARIANTS, break_even, common_prefix_length, cost, prompt_tokens
from bench.token_jobs import JOBS, SHAPES, Outcome, plan_tasks, run_job, shared_server, task_types
from tests.fakellm import Body
from tests.plan_script import PLANNER, system_is, task_is

NAME = "tokens"
TITLE = "Tokens and calls: plan vs ReAct"
SHORT = {"model reads": "plan", "direct actions": "plan, direct", "direct, one writer": "plan, direct, one writer"}
# Model replies one after another on a direct plan's critical path (planner, analysis, the write, summary;
# one writer: planner, writer, summary) and on ReAct's (all of them): the fewest a run can wait for.
SERIAL_REPLIES = {"direct actions": 4, "direct, one writer": 3, "react": 7}
SLOW_REPLY = 1.0  # seconds per reply of the second wall-time measurement: nearer to a real model's


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


def run(quick: bool = False) -> Result:
    sizes, headline, latency, rounds = ([2048], 2048, 0.01, 1) if quick else ([3 * 1024, 12 * 1024], 12 * 1024, 0.25, 3)
    result = Result(NAME, TITLE, details={"latency_s": latency, "rounds": rounds})
    for size in sizes:
        label = f"{size // 1024} KB files"
        runs: dict[str, list[Outcome]] = {mode: [] for mode in ("react", *JOBS)}
        for _ in range(rounds if size == headline else 1):
            for mode in runs:
                runs[mode].append(run_job(mode, size, latency))
        react = runs["react"][0]
        for job in JOBS:
            plan = runs[job][0]
            result.add(
                f"{label}: {SHORT[job]} ÷ ReAct prompt tokens",
                plan.prompt_tokens / react.prompt_tokens,
                at_most=round(1 / 3 if size == headline else 1 / 2, 3) if job != "model reads" else None,
            )
        result.details[label] = {mode: _details(outcomes) for mode, outcomes in runs.items()}
        if size == headline:
            _headline(result, label, runs, latency)
    if not quick:
        _wall_with_slower_replies(result, headline, rounds)
    _calibration(result, headline, 0.01, quick)  # what the runs cost does not depend on the model's pace
    return result


def _calibration(result: Result, size: int, latency: float, quick: bool) -> None:
    """Estimate ÷ actual on each plan shape, before and after the server's runs calibrated it (quick: the new
    shape only, without the other shapes' runs)."""
    details: dict[str, object] = {}
    for shape in SHAPES[-1:] if quick else SHAPES:
        runs: dict[str, Outcome] = {}
        with shared_server() as server:  # a new HOME: nothing is known of the server yet
            runs["not calibrated"] = run_job(shape, size, latency, server)
            runs["after the same shape"] = run_job(shape, size, latency, server)
        if not quick:
            with shared_server() as server:
                for other in SHAPES:
                    if other != shape:
                        run_job(other, size, latency, server)
                runs["after the other shapes"] = run_job(shape, size, latency, server)
        for label, outcome in runs.items():
            requests, tokens = estimate_ratios(outcome)
            inside = within_range(outcome)
            name = f"{size // 1024} KB files: estimate ÷ actual, {shape}, {label}: requests, prompt tokens (range)"
            result.add(name, f"{requests:.2f}, {tokens:.2f} ({'holds' if inside else 'misses'} the run)")
            details[f"{shape}, {label}"] = {
                "estimate": outcome.estimate,
                "over_run": [rounded(requests), rounded(tokens)],
                "in_range": inside,
            }
    result.details[f"{size // 1024} KB files, calibration"] = details


def within_range(plan: Outcome) -> bool:
    """Whether the prompt tokens the run used (without planning) are inside the estimate's range."""
    planning = [body for body in plan.bodies if system_is(PLANNER)(body)]
    tokens = plan.prompt_tokens - sum(map(prompt_tokens, planning))
    return bool(plan.estimate.get("prompt_tokens_low", 0) <= tokens <= plan.estimate.get("prompt_tokens_high", 0))


def _wall_with_slower_replies(result: Result, size: int, rounds: int) -> None:
    """The direct plans against ReAct once more, at SLOW_REPLY seconds per reply: the fixed costs of
    starting a Python program weigh less against replies of a real model's pace."""
    runs: dict[str, list[Outcome]] = {"react": [], "direct actions": [], "direct, one writer": []}
    for _ in range(rounds):
        for mode in runs:
            runs[mode].append(run_job(mode, size, SLOW_REPLY))
    react_wall = median([o.wall for o in runs["react"]])
    for job in ("direct actions", "direct, one writer"):
        name = f"{size // 1024} KB files: {SHORT[job]} ÷ ReAct wall time ({SLOW_REPLY:g} s per reply)"
        result.add(name, median([o.wall for o in runs[job]]) / react_wall, at_most=0.6)
        reference = reference_ratio(job, [o.wall for o in runs["react"]], SLOW_REPLY)
        label = f"{size // 1024} KB files: {SHORT[job]}"
        result.add(f"{label}, the same with only its serial replies and ReAct's fixed costs", reference)
    result.details[f"{size // 1024} KB files, {SLOW_REPLY:g} s per reply"] = {
        mode: {"wall_s": [rounded(o.wall) for o in outcomes]} for mode, outcomes in runs.items()
    }


def reference_ratio(job: str, react_walls: list[float], latency: float) -> float:
    """The plan's wall ÷ ReAct's if the plan cost its serial replies plus ReAct's fixed costs (ReAct's wall
    minus its replies: start-up, exit, its tool calls and the gaps between its requests): the reference
    for how much of the ratio is the plan's own doing. A plan with less overhead than ReAct's goes below it."""
    react_wall = median(react_walls)
    fixed = react_wall - SERIAL_REPLIES["react"] * latency
    return (SERIAL_REPLIES[job] * latency + fixed) / react_wall


def estimate_ratios(plan: Outcome) -> tuple[float, float]:
    """The plan's estimate ÷ what its run used, in requests and prompt tokens. The estimate is made once the
    plan is there: it covers the run, not the planner's request."""
    planning = [body for body in plan.bodies if system_is(PLANNER)(body)]
    requests = plan.requests - len(planning)
    tokens = plan.prompt_tokens - sum(map(prompt_tokens, planning))
    return plan.estimate["requests"] / requests, plan.estimate["prompt_tokens"] / tokens


def _details(outcomes: list[Outcome]) -> dict[str, object]:
    first = outcomes[0]
    details: dict[str, object] = {
        "prompt_tokens": first.prompt_tokens,
        "completion_tokens": first.completion_tokens,
        "requests": first.requests,
        "wall_s": [rounded(o.wall) for o in outcomes],
        "span_s": [rounded(o.span) for o in outcomes],
    }
    if first.estimate:
        details["estimate"] = first.estimate
        details["estimate_over_run"] = [rounded(ratio) for ratio in estimate_ratios(first)]
    return details


def _headline(result: Result, label: str, runs: dict[str, list[Outcome]], latency: float) -> None:
    react = runs["react"][0]
    react_wall = median([o.wall for o in runs["react"]])
    result.add(
        f"{label}: ReAct prompt / completion tokens, requests",
        f"{react.prompt_tokens:,} / {react.completion_tokens:,}, {react.requests}",
    )
    for job in JOBS:
        plan, name = runs[job][0], SHORT[job]
        result.add(
            f"{label}: {name} prompt / completion tokens, requests",
            f"{plan.prompt_tokens:,} / {plan.completion_tokens:,}, {plan.requests}",
        )
        result.add(f"{label}: {name}, model requests per task", (plan.requests - 2) / len(plan_tasks(job)))
        wall = median([o.wall for o in runs[job]]) / react_wall
        target = 0.6 if job != "model reads" else None  # reading through the model cannot be cheaper
        result.add(f"{label}: {name} ÷ ReAct wall time ({latency:g} s per reply)", wall, at_most=target)
        if job in SERIAL_REPLIES:
            reference = reference_ratio(job, [o.wall for o in runs["react"]], latency)
            result.add(
                f"{label}: {name}, the same with only its {SERIAL_REPLIES[job]} serial replies and ReAct's fixed costs",
                reference,
            )
        span = median([o.span for o in runs[job]]) / median([o.span for o in runs["react"]])
        result.add(f"{label}: {name} ÷ ReAct wall time without start-up (first request to last reply)", span)
        requests, tokens = estimate_ratios(plan)
        result.add(
            f"{label}: {name}, estimate ÷ actual run (without planning): requests, prompt tokens",
            f"{requests:.2f}, {tokens:.2f}",
        )
        shares, shared = prefix_shares(plan.bodies)
        result.add(
            f"{label}: {name}, prefix shared by all tasks, median (min)",
            f"{100 * median(shares):.0f} % ({100 * min(shares):.0f} %)",
        )
        details = result.details[label][job]
        details["prefix_share_per_task"] = [rounded(s) for s in shares]
        details["shared_prefix_tokens"] = shared // 4
        details["tool_lists"] = _tool_lists(result, f"{label}: {name}", plan, task_types(job))


def _tool_lists(result: Result, label: str, plan: Outcome, types: dict[str, str]) -> dict[str, object]:
    """Task-request prompt tokens of each tool-list variant, and the cache price above which the per-type
    lists (read-only tools first, the better of the two) would cost less than one shared list."""
    costs = {
        (name, least): cost(plan.bodies, types, variant, least)
        for name, variant in VARIANTS.items()
        for least in MIN_CACHED
    }
    shared, per_type = costs["one shared list", MIN_CACHED[0]], costs["per type, read-only first", MIN_CACHED[0]]
    result.add(
        f"{label}, tools per type ÷ one shared list: task prompt tokens", per_type.prompt_tokens / shared.prompt_tokens
    )
    prices = [
        break_even(costs["one shared list", least], costs["per type, read-only first", least]) for least in MIN_CACHED
    ]
    result.add(
        f"{label}, tools per type cost less only above a cache price of ({' / '.join(map(str, MIN_CACHED))}"
        "-token cache units)",
        " / ".join(f"{price:.2f}" for price in prices),
    )
    return {
        f"{name}, cached from {least} tokens": {"prompt_tokens": c.prompt_tokens, "cached_tokens": c.cached_tokens}
        for (name, least), c in costs.items()
    }
