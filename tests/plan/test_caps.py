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


def test_a_direct_actions_output_reaches_its_dependents_whole_up_to_the_tools_own_cap() -> None:
    from paicli.plan.model import TaskAction

    text = "HEAD " + "y" * 12_000 + " TAIL"  # a 12 KB file read directly
    read = Task(
        id="r",
        description="read",
        type=TaskType.FILE_READ,
        status=TaskStatus.COMPLETED,
        result=text,
        action=TaskAction(tool="read_file", args={"path": "a.py"}),
        raw_result=True,
    )
    user = Task(id="u", description="use", dependencies=["r"])
    brief = task_brief(Plan(goal="g", summary="s", tasks=[read, user]), user)
    assert text in brief  # not cut: the model would have read all of it through read_file
    shown = read.shown_result(caps.CLOSING_RESULT)
    assert len(shown) < caps.RAW_RESULT_SHOWN + 200  # the summarizer gets a marked excerpt
