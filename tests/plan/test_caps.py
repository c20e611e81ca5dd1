"""Every cut of a task's text keeps its head and its tail (a result's conclusion is usually at its end)."""

from __future__ import annotations

from paicli.plan import caps
from paicli.plan.executor import task_brief
from paicli.plan.model import Plan, Task, TaskStatus, TaskType
from paicli.plan.summary import outcome_brief


def long_result() -> str:
    return "HEAD-MARK " + "x" * (3 * caps.DEPENDENCY_RESULT) + " TAIL-CONCLUSION"


def plan() -> Plan:
    done = Task(id="a", description="find", type=TaskType.ANALYSIS, status=TaskStatus.COMPLETED, result=long_result())
    return Plan(goal="g", summary="s", tasks=[done, Task(id="b", description="use", dependencies=["a"])])


def test_a_dependency_result_is_cut_in_the_middle() -> None:
    brief = task_brief(plan(), plan().task("b"))
    assert "HEAD-MARK" in brief and "TAIL-CONCLUSION" in brief and "omitted" in brief
    assert len(brief) < caps.DEPENDENCY_RESULT + 2_000


def test_the_summarizer_sees_the_head_and_the_tail_within_its_cap() -> None:
    text = outcome_brief(plan())
    assert "HEAD-MARK" in text and "TAIL-CONCLUSION" in text
    assert len(text) < caps.CLOSING_RESULT + 1_000
