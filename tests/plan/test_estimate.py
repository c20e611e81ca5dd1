"""The plan's cost estimate: requests and prompt tokens by the documented model, with files sized from the
workspace where a task's shape depends on them (a direct read feeding a dependent, a write that only
creates files). How far off it is on a real run is measured by `bench tokens`."""

from __future__ import annotations

from pathlib import Path

from paicli.llm.types import Estimate
from paicli.plan.estimate import DEPENDENCY_TOKENS, RAW_TOKENS, REQUESTS, Estimator
from paicli.plan.executor import RESULT_CAP
from paicli.plan.model import Plan, Task, TaskAction, TaskStatus, TaskType

FIXED = 2_000


def plan_of(*tasks: Task) -> Plan:
    return Plan(goal="g" * 400, tasks=list(tasks))


def read(id: str, path: str) -> Task:
    return Task(
        id=id, description="d", type=TaskType.FILE_READ, action=TaskAction(tool="read_file", args={"path": path})
    )


def brief_of(estimator: Estimator, plan: Plan, task: Task) -> int:
    """The tokens of the task's brief beyond the fixed part, as the estimate counts them (one request)."""
    return estimator.task(plan, task).prompt_tokens - FIXED


def test_direct_actions_cost_nothing_and_model_tasks_cost_their_requests() -> None:
    analysis = Task(id="a", description="d", dependencies=["r"])
    plan = plan_of(read("r", "x.py"), analysis)
    estimator = Estimator(fixed_tokens=FIXED, closing_fixed_tokens=100)
    assert estimator.task(plan, plan.tasks[0]) == Estimate()
    assert estimator.task(plan, analysis).requests == REQUESTS[TaskType.ANALYSIS] == 1
    total = estimator(plan)
    assert total.requests == 2  # the analysis and the summary
    assert Estimator(fixed_tokens=FIXED, review=True)(plan).requests == 3


def test_a_direct_read_is_sized_from_its_file(workspace: Path) -> None:
    (workspace / "small.py").write_text("x" * 800)
    (workspace / "big.py").write_text("x" * 100_000)
    estimator = Estimator(fixed_tokens=FIXED, workspace=workspace)
    plan = plan_of(
        read("s", "small.py"),
        read("b", "big.py"),
        read("m", "missing.py"),
        Task(id="answer", description="d", type=TaskType.ANALYSIS),
        Task(id="a1", description="d", dependencies=["s"]),
        Task(id="a2", description="d", dependencies=["b"]),
        Task(id="a3", description="d", dependencies=["m"]),
        Task(id="a4", description="d", dependencies=["answer"]),
    )
    base = brief_of(estimator, plan, plan.task("answer"))
    assert brief_of(estimator, plan, plan.task("a1")) - base == 1_000 // 4 + 60  # 800 bytes shown as ~1,000 characters
    assert (
        brief_of(estimator, plan, plan.task("a2")) - base == RESULT_CAP // 4 + 60 == RAW_TOKENS
    )  # cut as the brief cuts
    assert brief_of(estimator, plan, plan.task("a3")) - base == RAW_TOKENS  # unknown size: the cap
    assert brief_of(estimator, plan, plan.task("a4")) - base == DEPENDENCY_TOKENS  # a model's answer
    without = Estimator(fixed_tokens=FIXED)  # no workspace: the constants only
    assert brief_of(without, plan, plan.task("a1")) - brief_of(without, plan, plan.task("answer")) == RAW_TOKENS


def test_a_write_that_only_creates_files_needs_no_read_first(workspace: Path) -> None:
    (workspace / "app.py").write_text("print(1)\n")
    (workspace / "src").mkdir()
    estimator = Estimator(fixed_tokens=FIXED, workspace=workspace)

    def requests(files: list[str], estimator: Estimator = estimator) -> int:
        task = Task(id="w", description="d", type=TaskType.FILE_WRITE, files=files)
        return estimator.task(plan_of(task), task).requests

    assert requests(["NEW.md", "docs/new.md"]) == 2
    assert requests(["NEW.md", "app.py"]) == 3  # it changes a file that exists: read, change, answer
    assert requests(["src/"]) == 3 and requests(["new_folder/"]) == 3  # a folder may hold files to change
    assert requests(["NEW.md"], Estimator(fixed_tokens=FIXED)) == 3  # nothing known about the workspace


def test_files_are_sized_only_inside_the_workspace(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text("x" * 800)
    (workspace / "link.py").symlink_to(outside)
    (workspace / "folder").mkdir()
    estimator = Estimator(fixed_tokens=FIXED, workspace=workspace)
    alone = plan_of(Task(id="a", description="d"))
    base = brief_of(estimator, alone, alone.tasks[0])
    for path in ("link.py", "../outside.py", str(outside), "folder", "/dev/zero"):
        plan = plan_of(read("r", path), Task(id="a", description="d", dependencies=["r"]))
        assert brief_of(estimator, plan, plan.task("a")) - base == RAW_TOKENS, path


def test_only_pending_tasks_are_estimated() -> None:
    done = Task(id="old", description="d", status=TaskStatus.COMPLETED, result="r")
    plan = plan_of(done, Task(id="new", description="d", dependencies=["old"]))
    assert Estimator(fixed_tokens=FIXED)(plan).requests == 2  # the new task and the summary
