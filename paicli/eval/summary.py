"""The report's figures, computed once from the run records; the Markdown, HTML and terminal views only
lay them out.

Per suite, mode and model: the runs, the `error` runs (the harness could not give the agent a fair start:
left out of the pass rate and counted apart), the pass rate of the other runs with its 95 % Wilson
interval, and the medians over those runs of tokens (prompt + completion), cost and the agent's wall time.

Per suite and model that ran in both modes, plan ÷ chat on the tasks both modes solved: for each such task
the ratio of plan's to chat's value (each the median over that mode's passing runs of the task, when
repeated), and the median of those per-task ratios. A ratio below 1 means plan mode spent less."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from paicli.eval.records import RunRecord
from paicli.eval.stats import median_of, ratio, wilson

MODE_ORDER = {"plan": 0, "chat": 1}


@dataclass(frozen=True)
class GroupSummary:
    suite: str
    mode: str
    model: str
    runs: int  # every record, errors included
    errors: int
    passed: int
    timeouts: int
    over_budget: int
    tasks: int
    median_tokens: float | None
    median_cost: float | None
    median_wall_s: float | None

    @property
    def counted(self) -> int:
        return self.runs - self.errors

    @property
    def failed(self) -> int:
        return self.counted - self.passed

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.counted if self.counted else None

    @property
    def interval(self) -> tuple[float, float]:
        return wilson(self.passed, self.counted)


@dataclass(frozen=True)
class TaskRatio:
    task: str
    tokens: float | None
    cost: float | None
    wall_s: float | None


@dataclass(frozen=True)
class PairedRatios:
    """plan ÷ chat for one model of one suite."""

    suite: str
    model: str
    both_solved: int  # tasks that at least one run of each mode solved
    tokens: float | None
    cost: float | None
    wall_s: float | None
    per_task: tuple[TaskRatio, ...]


@dataclass(frozen=True)
class TaskCell:
    """One task's outcome for one mode and model (several runs when repeated)."""

    passed: int
    counted: int
    errors: int


@dataclass(frozen=True)
class Summary:
    groups: tuple[GroupSummary, ...]
    paired: tuple[PairedRatios, ...]
    tasks: dict[str, tuple[str, ...]]  # suite -> task ids, sorted
    cells: dict[tuple[str, str, str, str], TaskCell]  # (suite, task, mode, model)
    runs: int


def tokens_of(record: RunRecord) -> int:
    return record.prompt_tokens + record.completion_tokens


def _group(suite: str, mode: str, model: str, records: list[RunRecord]) -> GroupSummary:
    counted = [r for r in records if r.counted]
    return GroupSummary(
        suite=suite,
        mode=mode,
        model=model,
        runs=len(records),
        errors=len(records) - len(counted),
        passed=sum(r.solved for r in counted),
        timeouts=sum(r.outcome == "timeout" for r in counted),
        over_budget=sum(r.outcome == "over_budget" for r in counted),
        tasks=len({r.task for r in records}),
        median_tokens=median_of(float(tokens_of(r)) for r in counted),
        median_cost=median_of(r.cost for r in counted),
        median_wall_s=median_of(r.wall_s for r in counted),
    )


def _solved_medians(records: list[RunRecord]) -> tuple[float | None, float | None, float | None]:
    solved = [r for r in records if r.solved]
    return (
        median_of(float(tokens_of(r)) for r in solved),
        median_of(r.cost for r in solved),
        median_of(r.wall_s for r in solved),
    )


def _paired(suite: str, model: str, plan: list[RunRecord], chat: list[RunRecord]) -> PairedRatios:
    by_task: dict[str, dict[str, list[RunRecord]]] = defaultdict(lambda: {"plan": [], "chat": []})
    for record in plan + chat:
        by_task[record.task][record.mode].append(record)
    per_task: list[TaskRatio] = []
    for task in sorted(by_task):
        runs = by_task[task]
        if not (any(r.solved for r in runs["plan"]) and any(r.solved for r in runs["chat"])):
            continue
        plan_values, chat_values = _solved_medians(runs["plan"]), _solved_medians(runs["chat"])
        tokens, cost, wall = (ratio(p, c) for p, c in zip(plan_values, chat_values, strict=True))
        per_task.append(TaskRatio(task=task, tokens=tokens, cost=cost, wall_s=wall))
    return PairedRatios(
        suite=suite,
        model=model,
        both_solved=len(per_task),
        tokens=median_of(t.tokens for t in per_task),
        cost=median_of(t.cost for t in per_task),
        wall_s=median_of(t.wall_s for t in per_task),
        per_task=tuple(per_task),
    )


def summarize(records: list[RunRecord]) -> Summary:
    grouped: dict[tuple[str, str, str], list[RunRecord]] = defaultdict(list)
    cell_runs: dict[tuple[str, str, str, str], list[RunRecord]] = defaultdict(list)
    tasks: dict[str, set[str]] = defaultdict(set)
    for record in records:
        grouped[(record.suite, record.mode, record.model)].append(record)
        cell_runs[(record.suite, record.task, record.mode, record.model)].append(record)
        tasks[record.suite].add(record.task)
    order = sorted(grouped, key=lambda key: (key[0], key[2], MODE_ORDER.get(key[1], 9)))
    groups = tuple(_group(suite, mode, model, grouped[(suite, mode, model)]) for suite, mode, model in order)
    paired = tuple(
        _paired(suite, model, grouped[(suite, "plan", model)], grouped[(suite, "chat", model)])
        for suite, mode, model in order
        if mode == "plan" and (suite, "chat", model) in grouped
    )
    cells = {
        key: TaskCell(
            passed=sum(r.solved for r in runs),
            counted=sum(r.counted for r in runs),
            errors=sum(not r.counted for r in runs),
        )
        for key, runs in cell_runs.items()
    }
    return Summary(
        groups=groups,
        paired=paired,
        tasks={suite: tuple(sorted(ids)) for suite, ids in sorted(tasks.items())},
        cells=cells,
        runs=len(records),
    )
