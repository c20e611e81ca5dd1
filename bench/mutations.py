"""Planner replies for the robustness benchmark: the corpus of tests/plan/corpus.py and
tests/plan/corpus_contract.py plus mutations of its replies, each with what the planner must do with it
(`parse_plan_reply`, and for the contract's cases the plan contract too).

Mutations of the accepted replies (all seeded): random truncation with finish_reason "length" (must be
rejected) and with "stop" (must be rejected, or give the very same full plan when only trailing prose
was cut); the reply in a code fence; prose around it; key aliases (depends_on, task_id, writes,
tool_call, ...); a cycle
or a self-dependency added (must be rejected with the cycle named).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field, replace
from typing import Any

from tests.plan.corpus import Accept, Case, TaskSpec
from tests.plan.corpus_contract import EVERY_CASE

MUTATE_AT_MOST = 20_000  # characters; the corpus's 200 KB and 400 KB replies are only used as they are
CUT_OFF_HINTS = ("cut off", "unterminated", "contains no JSON", "was empty", 'no "tasks" array', "has no tasks")
DEPENDENCY_ALIASES = ("depends_on", "dependsOn", "deps", "depends")
ID_ALIASES = ("task_id", "taskId")
TYPE_ALIASES = ("task_type", "taskType", "kind")
FILES_ALIASES = ("files", "writes", "paths")
ACTION_ALIASES = ("action", "tool_call")


@dataclass(frozen=True)
class Trial:
    name: str
    origin: str  # "corpus", "cut (length)", "cut (stop)", "fenced", "prose", "aliases", "cycle", "SSE split"
    reply: str
    finish_reason: str | None = "stop"
    accept: list[TaskSpec] | None = None  # the plan that must come out (None: it must be rejected)
    summary: str | None = None  # checked when given
    hints: tuple[str, ...] = ()  # a useful rejection's message contains one of these
    either: bool = False  # a rejection (with a hint) and the `accept` plan are both correct
    external_ids: frozenset[str] = field(default_factory=frozenset)
    max_tasks: int = 50
    contract: bool = False  # checked against the plan contract too (in tests/plan/corpus_contract.py's workspace)
    files: dict[str, list[str]] | None = None  # as Accept's: checked when given
    actions: dict[str, tuple[str, dict[str, Any]]] | None = None

    @property
    def label(self) -> Accept | None:
        """What must come out, as the corpus labels it (None: it must be rejected)."""
        if self.accept is None:
            return None
        return Accept(self.accept, summary=self.summary, files=self.files, actions=self.actions)

    @property
    def must_accept(self) -> bool:
        return self.accept is not None and not self.either

    @property
    def must_reject(self) -> bool:
        return self.accept is None


def from_case(case: Case) -> Trial:
    common: dict[str, Any] = {
        "external_ids": case.external_ids,
        "max_tasks": case.max_tasks,
        "finish_reason": case.finish_reason,
        "contract": case.contract,
    }
    if isinstance(case.expect, Accept):
        expect = case.expect
        return Trial(
            case.name,
            "corpus",
            case.reply,
            accept=expect.tasks,
            summary=expect.summary,
            files=expect.files,
            actions=expect.actions,
            **common,
        )
    return Trial(case.name, "corpus", case.reply, hints=(case.expect.contains,), **common)


def trials(seed: int = 6) -> list[Trial]:
    rng = random.Random(seed)
    base = [from_case(case) for case in EVERY_CASE]
    mutated: list[Trial] = []
    for trial in base:
        if not trial.must_accept or len(trial.reply) > MUTATE_AT_MOST:
            continue
        mutated += _cuts(trial, rng)
        if "```" not in trial.reply:
            label = "json" if len(mutated) % 2 else ""
            mutated.append(
                replace(trial, name=f"{trial.name} [fenced]", origin="fenced", reply=f"```{label}\n{trial.reply}\n```")
            )
        mutated.append(
            replace(
                trial,
                name=f"{trial.name} [prose]",
                origin="prose",
                reply=f"Here is the plan you asked for.\n\n{trial.reply}\n\nShall I start?",
            )
        )
        value = _as_plan_object(trial.reply)
        if value is not None:
            mutated.append(_aliased(trial, value, rng))
            mutated += _cycles(trial, value)
    return base + mutated


def _cuts(trial: Trial, rng: random.Random) -> list[Trial]:
    cuts = []
    for number in range(2):
        at = rng.randrange(len(trial.reply))
        cuts.append(
            replace(
                trial,
                name=f"{trial.name} [cut at {at}, length #{number}]",
                origin="cut (length)",
                reply=trial.reply[:at],
                finish_reason="length",
                accept=None,
                hints=("cut off",),
            )
        )
    for number in range(3):
        at = rng.randrange(len(trial.reply))
        cuts.append(
            replace(
                trial,
                name=f"{trial.name} [cut at {at}, stop #{number}]",
                origin="cut (stop)",
                reply=trial.reply[:at],
                finish_reason="stop",
                either=True,
                hints=CUT_OFF_HINTS,
            )
        )
    return cuts


def _as_plan_object(reply: str) -> dict[str, Any] | None:
    """The reply as a plan object whose tasks are objects with ids and dependency lists, else None."""
    try:
        value = json.loads(reply)
    except ValueError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("tasks"), list) or not value["tasks"]:
        return None
    tasks = value["tasks"]
    if not all(isinstance(t, dict) and "id" in t and isinstance(t.get("dependencies", []), list) for t in tasks):
        return None
    return value


def _aliased(trial: Trial, value: dict[str, Any], rng: random.Random) -> Trial:
    tasks = []
    for task in value["tasks"]:
        renamed = {}
        for key, item in task.items():
            if key == "dependencies":
                key = rng.choice(DEPENDENCY_ALIASES)
            elif key == "id":
                key = rng.choice(ID_ALIASES)
            elif key == "type":
                key = rng.choice(TYPE_ALIASES)
            elif key == "files":
                key = rng.choice(FILES_ALIASES)
            elif key == "action":
                key = rng.choice(ACTION_ALIASES)
            renamed[key] = item
        tasks.append(renamed)
    key = "steps" if rng.random() < 0.3 else "tasks"
    reply = json.dumps({**{k: v for k, v in value.items() if k != "tasks"}, key: tasks}, indent=2, ensure_ascii=False)
    return replace(trial, name=f"{trial.name} [aliases]", origin="aliases", reply=reply)


def _cycles(trial: Trial, value: dict[str, Any]) -> list[Trial]:
    """A back edge from a dependency to its dependent (a cycle), and a task depending on itself."""
    tasks = value["tasks"]
    ids = {str(t["id"]).strip() for t in tasks}
    edge = next(
        (
            (index, str(dep).strip())
            for index, t in enumerate(tasks)
            for dep in t.get("dependencies", [])
            if str(dep).strip() in ids and str(dep).strip() != str(t["id"]).strip()
        ),
        None,
    )
    result = []
    selfish = json.loads(json.dumps(value))
    selfish["tasks"][0]["dependencies"] = [*selfish["tasks"][0].get("dependencies", []), selfish["tasks"][0]["id"]]
    result.append(
        replace(
            trial,
            name=f"{trial.name} [self-dependency]",
            origin="cycle",
            accept=None,
            reply=json.dumps(selfish, indent=2, ensure_ascii=False),
            hints=("depends on itself",),
        )
    )
    if edge is not None:
        looped = json.loads(json.dumps(value))
        dependent, dependency = edge
        for task in looped["tasks"]:
            if str(task["id"]).strip() == dependency:
                task["dependencies"] = [*task.get("dependencies", []), looped["tasks"][dependent]["id"]]
        result.append(
            replace(
                trial,
                name=f"{trial.name} [cycle]",
                origin="cycle",
                accept=None,
                reply=json.dumps(looped, indent=2, ensure_ascii=False),
                hints=("form a cycle",),
            )
        )
    return result
