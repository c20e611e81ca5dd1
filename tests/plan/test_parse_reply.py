"""parse_plan_reply against the corpus of labelled replies, plus the rule that no cut-off reply is ever
accepted as a (shorter) plan."""

from __future__ import annotations

from pathlib import Path

import pytest

from paicli.common.errors import PlanError
from paicli.plan.model import Plan, TaskStatus
from paicli.plan.parse_reply import parse_plan_reply
from tests.plan.corpus import THREE, TRUNCATE_ME, Accept, Case, Reject
from tests.plan.corpus_contract import CONTRACT_CASES, EVERY_CASE, contract_workspace, planner_accepts


@pytest.fixture(scope="module")
def contract_ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return contract_workspace(tmp_path_factory.mktemp("contract"))


def parse(case: Case, workspace: Path, reply: str | None = None, finish_reason: str | None = None) -> Plan:
    """What the planner makes of the case's reply (or of `reply`): parsed, and for a contract case checked
    against the plan contract too."""
    return planner_accepts(
        case.reply if reply is None else reply,
        finish_reason=case.finish_reason if reply is None else finish_reason,
        workspace=workspace if case.contract else None,
        max_tasks=case.max_tasks,
        external_ids=case.external_ids,
    )


def test_the_corpus_is_large_and_covers_both_outcomes() -> None:
    assert len(EVERY_CASE) >= 60
    assert len({case.name for case in EVERY_CASE}) == len(EVERY_CASE)
    assert sum(isinstance(case.expect, Accept) for case in EVERY_CASE) >= 25
    assert sum(isinstance(case.expect, Reject) for case in EVERY_CASE) >= 25
    assert sum(isinstance(case.expect, Accept) for case in CONTRACT_CASES) >= 15
    assert sum(isinstance(case.expect, Reject) for case in CONTRACT_CASES) >= 30


@pytest.mark.parametrize("case", [c for c in EVERY_CASE if isinstance(c.expect, Accept)], ids=lambda c: c.name)
def test_accepted_reply(case: Case, contract_ws: Path) -> None:
    assert isinstance(case.expect, Accept)
    plan = parse(case, contract_ws)
    assert [(t.id, t.type.value, t.dependencies) for t in plan.tasks] == case.expect.tasks
    assert case.expect.matches(plan)
    assert plan.goal == "the goal"
    assert all(t.description and t.description == t.description.strip() for t in plan.tasks)
    assert all(t.status is TaskStatus.PENDING for t in plan.tasks)
    assert sorted(plan.topological_order()) == sorted(plan.ids())


@pytest.mark.parametrize("case", [c for c in EVERY_CASE if isinstance(c.expect, Reject)], ids=lambda c: c.name)
def test_rejected_reply(case: Case, contract_ws: Path) -> None:
    assert isinstance(case.expect, Reject)
    with pytest.raises(PlanError) as caught:
        parse(case, contract_ws)
    message = str(caught.value)
    assert case.expect.contains in message
    assert "\n" not in message  # one line, sent back to the model as it is


def test_no_truncated_plan_is_ever_accepted(contract_ws: Path) -> None:
    """Cut every accepted reply at many points: the result is a rejection or the very same full plan."""
    checked = 0
    for case in EVERY_CASE:
        if not isinstance(case.expect, Accept) or len(case.reply) > 5_000:
            continue
        full = parse(case, contract_ws)
        step = 1 if case.reply in (THREE, TRUNCATE_ME) else 5
        for cut in range(0, len(case.reply), step):
            prefix = case.reply[:cut]
            for finish_reason in ("stop", "length"):
                try:
                    plan = parse(case, contract_ws, prefix, finish_reason)
                except PlanError:
                    continue
                assert finish_reason == "stop", f"{case.name}: accepted a reply cut off by length"
                assert plan.spec() == full.spec(), f"{case.name}: accepted a plan cut at {cut}"
            checked += 1
    assert checked > 2_000


def test_json_repair_never_sees_an_unbalanced_reply() -> None:
    """json_repair alone would happily close the brackets of a cut-off plan: that must not happen here."""
    import json_repair

    cut = TRUNCATE_ME[: TRUNCATE_ME.index("task_3") - 20]
    assert len(json_repair.loads(cut)["tasks"]) == 2  # what a naive parser would accept
    with pytest.raises(PlanError, match="unterminated"):
        parse_plan_reply(cut, finish_reason="stop", goal="g")


def test_round_is_stamped_on_the_plan_and_its_tasks() -> None:
    plan = parse_plan_reply(THREE, finish_reason="stop", goal="g", round=3)
    assert plan.round == 3
    assert {task.round for task in plan.tasks} == {3}


def test_topological_order_is_available_while_display_order_stays_the_models() -> None:
    reply = (
        '{"tasks": [{"id": "c", "description": "z", "deps": ["b"]}, {"id": "b", "description": "y", '
        '"deps": ["a"]}, {"id": "a", "description": "x"}]}'
    )
    plan = parse_plan_reply(reply, finish_reason="stop", goal="g")
    assert plan.ids() == ["c", "b", "a"]
    assert plan.topological_order() == ["a", "b", "c"]
