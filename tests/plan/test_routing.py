"""Which model a plan's requests name: the precedence of the model settings (paicli/plan/routing.py)."""

from __future__ import annotations

from paicli.config import TASK_TYPES, Settings
from paicli.plan.model import TaskType
from paicli.plan.routing import model_for_planner, model_for_reviewer, model_for_summarizer, model_for_task


def test_the_config_knows_every_task_type() -> None:
    assert tuple(TaskType) == TASK_TYPES


def test_a_task_takes_its_types_model_then_the_executor_model_then_the_session_model() -> None:
    s = Settings(model="session", executor_model="exec", models={"analysis": "deep"})
    assert model_for_task(s, TaskType.ANALYSIS) == "deep"
    assert model_for_task(s, "analysis") == "deep"
    assert model_for_task(s, TaskType.FILE_READ) == "exec"
    assert model_for_task(s.model_copy(update={"executor_model": None}), TaskType.FILE_READ) == "session"
    assert model_for_task(s, "no such type") == "deep"  # read as the planner reads it: ANALYSIS


def test_planner_summarizer_and_reviewer_have_their_own_model_or_the_session_model() -> None:
    plain = Settings(model="session", executor_model="exec", models={"ANALYSIS": "deep"})
    assert (model_for_planner(plain), model_for_summarizer(plain), model_for_reviewer(plain)) == ("session",) * 3
    routed = plain.model_copy(update={"planner_model": "p", "summarizer_model": "s", "reviewer_model": "r"})
    assert (model_for_planner(routed), model_for_summarizer(routed), model_for_reviewer(routed)) == ("p", "s", "r")
