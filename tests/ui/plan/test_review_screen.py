"""The review screen.

The `pty` tests drive tests/ui/plan/review_driver.py through a real pseudo-terminal with pexpect: it reviews
a three-task plan (task_1 → task_2 → task_3) with a planner whose amend appends a task made from the
supplement, and prints `RESULT <json>` at the end (null when cancelled). The other tests run
`review_plan` in-process on a prompt_toolkit pipe input, sending each key only once the screen shows
that the previous one was handled.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import shlex
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output.vt100 import Vt100_Output
from rich.console import Console

from paicli.plan.model import Plan, PlanStatus, Task, TaskStatus, TaskType
from paicli.plan.resume import prepare_resume
from paicli.ui.plan.plan_editor import editor_command
from paicli.ui.plan.review_screen import review_plan
from tests.ui.plan.review_driver import RecordingPlanner, sample_plan

DRIVER = Path(__file__).with_name("review_driver.py")
ROOT = DRIVER.parents[2]
HINT = "approve"  # part of the key hint: the review is waiting for a key
WAIT = 20  # seconds; generous, the machine is noisy


class Review:
    def __init__(self, tmp_path: Path, editor: str | None) -> None:
        self.log = tmp_path / "amend.log"
        env = {key: value for key, value in os.environ.items() if key not in ("EDITOR", "VISUAL")}
        env.update(PYTHONPATH=str(ROOT), TERM="xterm-256color", COLUMNS="100", LINES="30")
        # A terminal answers prompt_toolkit's cursor-position request at once; pexpect does not, and each
        # unanswered request costs a timeout, so tell prompt_toolkit not to ask.
        env["PROMPT_TOOLKIT_NO_CPR"] = "1"
        if editor is not None:
            env["EDITOR"] = editor
        self.child = pexpect.spawn(
            sys.executable,
            [str(DRIVER), str(self.log)],
            cwd=str(tmp_path),
            env=env,
            dimensions=(30, 100),
            encoding="utf-8",
            timeout=WAIT,
        )

    def waiting(self) -> None:
        self.child.expect_exact(HINT)

    def result(self) -> dict[str, Any] | None:
        self.child.expect(r"RESULT (.*)\r\n")
        outcome: dict[str, Any] | None = json.loads(self.child.match.group(1))
        self.child.expect(pexpect.EOF)
        return outcome

    def supplements(self) -> list[str]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text(encoding="utf-8").splitlines()]

    def close(self) -> None:
        self.child.close(force=True)


@pytest.fixture
def review(tmp_path: Path) -> Iterator[Any]:
    started: list[Review] = []

    def start(editor: str | None = None) -> Review:
        started.append(Review(tmp_path, editor))
        return started[-1]

    yield start
    for item in started:
        item.close()


def python_editor(tmp_path: Path, body: str) -> str:
    """An $EDITOR value running a small Python script on the file; `text` holds its content."""
    script = tmp_path / "editor.py"
    script.write_text(
        "import sys\nfrom pathlib import Path\npath = Path(sys.argv[-1])\ntext = path.read_text()\n" + body,
        encoding="utf-8",
    )
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"


def ids(plan: dict[str, Any] | None) -> list[str]:
    assert plan is not None
    return [task["id"] for task in plan["tasks"]]


@pytest.mark.pty
def test_enter_approves_the_plan_as_shown(review: Any) -> None:
    session = review()
    session.child.expect_exact("3 tasks · 3 levels · critical path 3 tasks")
    session.waiting()
    session.child.send("\r")
    assert ids(session.result()) == ["task_1", "task_2", "task_3"]


@pytest.mark.pty
def test_escape_cancels_promptly(review: Any) -> None:
    session = review()
    session.waiting()
    session.child.send("\x1b")
    assert session.result() is None


@pytest.mark.pty
def test_arrow_keys_pasted_text_and_other_keys_do_nothing(review: Any) -> None:
    session = review()
    session.waiting()
    session.child.send("\x1b[A\x1b[B\x1b[C\x1b[D")
    session.child.send("\x1b[200~hello\x1b[201~")
    session.child.send("\x1b[200~i\re\x1b\x1b[201~")  # keys inside a paste are text, not actions
    session.child.send("xyz")
    session.child.send("\r")
    plan = session.result()
    assert ids(plan) == ["task_1", "task_2", "task_3"]
    assert session.supplements() == []


@pytest.mark.pty
def test_i_amends_with_the_supplement_and_shows_the_new_plan(review: Any) -> None:
    session = review()
    session.waiting()
    session.child.send("i")
    session.child.expect_exact("Add to the plan")
    session.child.send("add tests\r")
    session.child.expect_exact("4 tasks · 4 levels")
    session.child.expect_exact("task_4")
    session.waiting()
    session.child.send("\r")
    plan = session.result()
    assert session.supplements() == ["add tests"]
    assert ids(plan) == ["task_1", "task_2", "task_3", "task_4"]
    assert plan is not None and plan["tasks"][3]["description"] == "add tests"


@pytest.mark.pty
def test_escape_cancels_a_running_amend_and_keeps_the_plan(review: Any) -> None:
    session = review()
    session.waiting()
    session.child.send("i")
    session.child.expect_exact("Add to the plan")
    session.child.send("slow\r")
    session.child.expect_exact("Amending the plan")
    session.child.send("\x1b")
    session.child.expect_exact("Amending cancelled")
    session.waiting()
    session.child.send("\r")
    assert ids(session.result()) == ["task_1", "task_2", "task_3"]


@pytest.mark.pty
def test_e_edits_the_plan_in_the_editor_and_the_edit_is_approved(review: Any, tmp_path: Path) -> None:
    editor = python_editor(
        tmp_path,
        'path.write_text(text.replace("Add GET /health", "Add GET /health and GET /ready"))\n',
    )
    session = review(editor)
    session.waiting()
    session.child.send("e")
    session.child.expect_exact("Add GET /health and GET /ready")
    session.waiting()
    session.child.send("\r")
    plan = session.result()
    assert plan is not None
    assert plan["tasks"][1]["description"] == "Add GET /health and GET /ready"


CYCLE_THEN_FIX = """\
cycle = "## task_1 [FILE_READ] after: task_3"
if cycle in text:  # reopened with the user's own (invalid) text: fix it
    Path(__file__).with_name("reopened.txt").write_text("yes")
    path.write_text(text.replace(cycle, "## task_1 [FILE_READ]").replace("Run pytest -q", "Run pytest -x"))
else:
    path.write_text(text.replace("## task_1 [FILE_READ]", cycle))
"""


@pytest.mark.pty
def test_an_edit_with_a_cycle_is_reported_and_reopened_with_the_users_text(review: Any, tmp_path: Path) -> None:
    session = review(python_editor(tmp_path, CYCLE_THEN_FIX))
    session.waiting()
    session.child.send("e")
    session.child.expect_exact("cycle")
    session.child.expect_exact("task_1 → task_3 → task_2 → task_1")
    session.child.expect_exact("edit again")
    session.child.send("e")
    session.child.expect_exact("Run pytest -x")
    session.waiting()
    session.child.send("\r")
    plan = session.result()
    assert (tmp_path / "reopened.txt").read_text() == "yes"
    assert plan is not None
    assert [task["dependencies"] for task in plan["tasks"]] == [[], ["task_1"], ["task_2"]]
    assert plan["tasks"][2]["description"] == "Run pytest -x"


def test_editor_command_prefers_editor_then_visual_then_vi_and_splits_arguments() -> None:
    assert editor_command({"EDITOR": "code --wait", "VISUAL": "nano"}) == ["code", "--wait"]
    assert editor_command({"VISUAL": "'my editor' -n"}) == ["my editor", "-n"]
    assert editor_command({"EDITOR": "  "}) == ["vi"]
    assert editor_command({}) == ["vi"]


# ---- in-process: pipe input, the plan printed to a StringIO console --------------------------------


class Screen:
    """`review_plan` running as a task; keys go in through a pipe. What was shown: the console's text (the
    plan, notes) and prompt_toolkit's output (key hints, prompts; escape sequences included)."""

    def __init__(
        self, pipe: PipeInput, amend: Any, edit_text: Any = None, plan: Plan | None = None, facts: Any = None
    ) -> None:
        self.pipe = pipe
        self.out = io.StringIO()
        self.prompts = io.StringIO()
        console = Console(file=self.out, width=100)
        self.task = asyncio.ensure_future(
            review_plan(
                plan or sample_plan(),
                console=console,
                amend=amend,
                edit_text=edit_text,
                input=pipe,
                output=Vt100_Output(self.prompts, lambda: Size(rows=40, columns=100), term="xterm"),
                facts=facts,
            )
        )

    @property
    def text(self) -> str:
        return self.out.getvalue()

    def mark(self) -> int:
        return len(self.prompts.getvalue())

    async def prompts_for(self, fragment: str, *, after: int) -> None:
        """Waits until prompt_toolkit draws `fragment` after position `after` of its output (so it is
        reading keys; an application redraws, so earlier drawings must not count)."""
        await until(lambda: fragment in self.prompts.getvalue()[after:], f"prompt {fragment!r}", self)

    async def shows(self, fragment: str, count: int = 1) -> None:
        await until(lambda: self.text.count(fragment) >= count, f"{fragment!r} shown {count} time(s)", self)

    async def result(self) -> Plan | None:
        return await asyncio.wait_for(self.task, WAIT)


async def until(condition: Callable[[], bool], what: str, screen: Screen) -> None:
    for _ in range(WAIT * 50):
        if condition():
            return
        if screen.task.done():
            screen.task.result()  # raises the review's error, if any
            break
        await asyncio.sleep(0.02)
    raise AssertionError(f"never saw {what}; the screen shows:\n{screen.text}")


@pytest.fixture(autouse=True)
def no_interactive_editor(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stray `e` must never start a real editor on the test's terminal."""
    monkeypatch.setenv("EDITOR", "false")
    monkeypatch.delenv("VISUAL", raising=False)


@pytest.fixture
def pipe() -> Iterator[PipeInput]:
    with create_pipe_input() as pipe_input:
        yield pipe_input


@pytest.fixture
def planner(tmp_path: Path) -> RecordingPlanner:
    return RecordingPlanner(tmp_path / "amend.log")


def recorded(planner: RecordingPlanner) -> list[str]:
    if not planner.log.exists():
        return []
    return [json.loads(line) for line in planner.log.read_text(encoding="utf-8").splitlines()]


async def test_q_cancels(pipe: PipeInput, planner: RecordingPlanner) -> None:
    screen = Screen(pipe, planner)
    await screen.shows("Level 3")
    pipe.send_text("q")
    assert await screen.result() is None
    assert "Plan cancelled." in screen.text


async def test_an_empty_supplement_or_escape_in_the_prompt_goes_back_without_amending(
    pipe: PipeInput, planner: RecordingPlanner
) -> None:
    screen = Screen(pipe, planner)
    await screen.shows("Level 3")
    pipe.send_text("i")
    pipe.send_text("  \r")
    await screen.shows("Nothing added.")
    mark = screen.mark()
    pipe.send_text("i")
    await screen.prompts_for("Add to the plan", after=mark)
    pipe.send_text("half typed")
    pipe.send_text("\x1b")
    await screen.shows("Nothing added.", count=2)
    pipe.send_text("\r")
    plan = await screen.result()
    assert plan is not None and plan.ids() == ["task_1", "task_2", "task_3"]
    assert recorded(planner) == []


async def test_amend_also_accepts_a_bare_function(pipe: PipeInput) -> None:
    seen: list[str] = []

    async def amend(plan: Plan, supplement: str) -> Plan:
        seen.append(supplement)
        return plan.model_copy(update={"summary": supplement})

    screen = Screen(pipe, amend)
    await screen.shows("Level 3")
    pipe.send_text("i")
    pipe.send_text("only read, no writes\r")
    await screen.shows("only read, no writes")
    pipe.send_text("\r")
    plan = await screen.result()
    assert seen == ["only read, no writes"]
    assert plan is not None and plan.summary == "only read, no writes"


async def test_a_failed_amend_shows_one_line_and_the_old_plan_stays(pipe: PipeInput, planner: RecordingPlanner) -> None:
    screen = Screen(pipe, planner)
    await screen.shows("Level 3")
    pipe.send_text("i")
    pipe.send_text("fail\r")
    await screen.shows("Could not amend the plan: the planner's reply had no JSON")
    pipe.send_text("\r")
    plan = await screen.result()
    assert plan is not None and plan.ids() == ["task_1", "task_2", "task_3"]


async def test_a_crashing_amend_is_reported_not_raised(pipe: PipeInput) -> None:
    async def amend(plan: Plan, supplement: str) -> Plan:
        raise ValueError("bad\nthing")

    screen = Screen(pipe, amend)
    await screen.shows("Level 3")
    pipe.send_text("i")
    pipe.send_text("x\r")
    await screen.shows("Could not amend the plan: ValueError: bad thing")
    pipe.send_text("\r")
    assert await screen.result() is not None


async def test_ctrl_o_toggles_between_folded_and_full_descriptions(pipe: PipeInput, planner: RecordingPlanner) -> None:
    long_text = "Read src/app.py " + " ".join(f"word{n}" for n in range(40)) + " THE END"
    plan = Plan(goal="g", summary="s", tasks=[Task(id="task_1", description=long_text, type=TaskType.FILE_READ)])
    screen = Screen(pipe, planner, plan=plan)
    await screen.shows("Level 1")
    assert "THE END" not in screen.text and "…" in screen.text
    assert "expand" in screen.prompts.getvalue() and "collapse" not in screen.prompts.getvalue()
    mark = screen.mark()
    pipe.send_text("\x0f")
    await screen.shows("THE END")
    await screen.prompts_for("collapse", after=mark)  # the footer says what Ctrl+O does now
    pipe.send_text("\x0f")
    await screen.shows("Level 1", count=3)
    assert screen.text.count("THE END") == 1  # folded again
    pipe.send_text("\r")
    assert await screen.result() == plan


class ScriptedEdits:
    """An `edit_text` that returns prepared edits in turn and records the text it was opened with."""

    def __init__(self, *edits: Callable[[str], str | None]) -> None:
        self.edits = list(edits)
        self.opened: list[str] = []

    async def __call__(self, text: str) -> str | None:
        self.opened.append(text)
        return self.edits.pop(0)(text)


def add_cycle(text: str) -> str:
    return text.replace("## task_1 [FILE_READ]", "## task_1 [FILE_READ] after: task_3")


async def test_escape_after_an_invalid_edit_keeps_it_as_a_draft_for_the_next_e(
    pipe: PipeInput, planner: RecordingPlanner
) -> None:
    def fix(text: str) -> str:
        return text.replace(" after: task_3", "").replace("Read src/app.py", "Read src/app.py twice")

    edits = ScriptedEdits(add_cycle, fix)
    screen = Screen(pipe, planner, edit_text=edits)
    await screen.shows("Level 3")
    pipe.send_text("e")
    await screen.shows("the dependencies form a cycle: task_1 → task_3 → task_2 → task_1")
    pipe.send_text("\x1b")
    await screen.shows("press e to continue your edit")
    pipe.send_text("e")
    await screen.shows("Read src/app.py twice")
    pipe.send_text("\r")
    plan = await screen.result()
    assert edits.opened[1] == add_cycle(edits.opened[0])  # reopened with the user's own text
    assert plan is not None and plan.task("task_1").description == "Read src/app.py twice"
    assert plan.task("task_1").dependencies == []


async def test_escape_after_an_invalid_edit_then_escape_cancels(pipe: PipeInput, planner: RecordingPlanner) -> None:
    screen = Screen(pipe, planner, edit_text=ScriptedEdits(add_cycle))
    await screen.shows("Level 3")
    pipe.send_text("e")
    await screen.shows("form a cycle")
    pipe.send_text("\x1b")
    await screen.shows("Back to the plan")
    pipe.send_text("\x1b")
    assert await screen.result() is None


async def test_an_unchanged_edit_says_so(pipe: PipeInput, planner: RecordingPlanner) -> None:
    screen = Screen(pipe, planner, edit_text=ScriptedEdits(lambda text: text))
    await screen.shows("Level 3")
    pipe.send_text("e")
    await screen.shows("No changes.")
    pipe.send_text("\r")
    assert await screen.result() == sample_plan()


@pytest.mark.parametrize(
    ("editor", "said"),
    [
        ("missing", "could not start the editor"),
        ('path.write_text("garbage")\nsys.exit(1)\n', "The editor exited with an error; the plan is unchanged."),
    ],
    ids=["cannot start", "exits with an error"],
)
async def test_an_editor_that_fails_leaves_the_plan_unchanged(
    pipe: PipeInput,
    planner: RecordingPlanner,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    editor: str,
    said: str,
) -> None:
    missing = str(tmp_path / "no-such-editor") + " --wait"
    monkeypatch.setenv("EDITOR", missing if editor == "missing" else python_editor(tmp_path, editor))
    screen = Screen(pipe, planner)
    await screen.shows("Level 3")
    pipe.send_text("e")
    await screen.shows(said)
    pipe.send_text("\r")
    assert await screen.result() == sample_plan()


async def test_the_real_editor_round_trip_applies_the_saved_text(
    pipe: PipeInput, planner: RecordingPlanner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    editor = python_editor(tmp_path, 'path.write_text(text.replace("[COMMAND]", "[CHECK]"))\n')
    monkeypatch.setenv("EDITOR", editor)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    screen = Screen(pipe, planner)
    await screen.shows("Level 3")
    pipe.send_text("e")
    await screen.shows("CHECK")
    pipe.send_text("\r")
    plan = await screen.result()
    assert plan is not None and plan.task("task_3").type is TaskType.VERIFICATION
    assert not list(tmp_path.glob("paicli-plan-*"))  # the temporary file is gone


# ---- resumed plans: results from the file, `r` reruns ----------------------------------------------


def resumed_plan() -> Plan:
    plan = sample_plan()
    for task_id in ("task_1", "task_2"):
        plan.task(task_id).status, plan.task(task_id).result = TaskStatus.COMPLETED, f"{task_id} said so"
    plan.status = PlanStatus.FAILED
    return prepare_resume(plan)


async def test_results_from_the_saved_plan_are_marked_and_r_reruns_one_with_its_dependents(
    pipe: PipeInput, planner: RecordingPlanner
) -> None:
    screen = Screen(pipe, planner, plan=resumed_plan())
    await screen.shows("task_1, task_2: completed earlier, from the saved plan")
    mark = screen.mark()
    pipe.send_text("r")
    await screen.prompts_for("Rerun which completed task?", after=mark)
    pipe.send_text("task_1\r")
    await screen.shows("Will run again: task_1, task_2.")
    assert screen.text.count("completed earlier, from the saved plan") == 1  # the new plan has none left
    pipe.send_text("\r")
    plan = await screen.result()
    assert plan is not None
    assert [t.status for t in plan.tasks] == [TaskStatus.PENDING] * 3
    assert plan.task("task_1").result is None


async def test_r_with_an_unknown_or_unfinished_task_changes_nothing(pipe: PipeInput, planner: RecordingPlanner) -> None:
    screen = Screen(pipe, planner, plan=resumed_plan())
    await screen.shows("from the saved plan")
    pipe.send_text("r")
    pipe.send_text("nope\r")
    await screen.shows("There is no task nope in this plan.")
    pipe.send_text("r")
    pipe.send_text("task_3\r")
    await screen.shows("task_3 has not completed")
    mark = screen.mark()
    pipe.send_text("r")
    await screen.prompts_for("Rerun which completed task?", after=mark)
    pipe.send_text("\x1b")
    await screen.shows("Nothing rerun.")
    pipe.send_text("\r")
    plan = await screen.result()
    assert plan is not None and plan.task("task_1").status is TaskStatus.COMPLETED


async def test_r_is_offered_only_when_there_is_a_completed_task(pipe: PipeInput, planner: RecordingPlanner) -> None:
    screen = Screen(pipe, planner)
    await screen.shows("Level 3")
    pipe.send_text("r")
    await screen.shows("No completed task to rerun.")
    assert "rerun a task" not in screen.prompts.getvalue()
    pipe.send_text("\r")
    assert await screen.result() is not None


# ---- the plan contract on the review screen -----------------------------------------------------------


def contract_facts(tmp_path: Path) -> Any:
    from paicli.common.values import Estimate
    from paicli.plan.contract import Contract
    from paicli.tools.toolbox import builtin_tool
    from paicli.ui.plan.plan_facts import PlanFacts

    contract = Contract(tmp_path, builtin_tool)
    return PlanFacts(
        problems=lambda plan: contract.problems(plan, require_files=False),
        estimate=lambda plan: Estimate(requests=len(plan.tasks) * 2, prompt_tokens=31_000),
        model_of=lambda task: "deep-thinker" if task.type is TaskType.FILE_WRITE else None,
        cost=lambda plan: 0.5,
    )


def contract_plan() -> Plan:
    from paicli.plan.model import TaskAction

    plan = sample_plan()
    plan.task("task_1").action = TaskAction(tool="read_file", args={"path": "src/app.py"})
    plan.task("task_2").files = ["src/app.py", "tests/"]
    plan.task("task_3").action = TaskAction(tool="execute_command", args={"command": "pytest -q"})
    return plan


async def test_the_review_shows_the_estimate_write_sets_actions_and_models(
    pipe: PipeInput, planner: RecordingPlanner, tmp_path: Path
) -> None:
    screen = Screen(pipe, planner, plan=contract_plan(), facts=contract_facts(tmp_path))
    await screen.shows("Level 3")
    text = " ".join(screen.text.split())
    assert "Estimate: 6 model requests · ~31k prompt tokens · ~$0.50" in text
    assert text.index("Estimate:") < text.index("Level 1")  # above the plan
    assert "reads src/app.py · no model call" in text
    assert "may change src/app.py, tests/ · model deep-thinker" in text
    assert "runs `pytest -q` · no model call" in text
    pipe.send_text("\r")
    assert await screen.result() == contract_plan()


async def test_an_edit_that_breaks_the_contract_is_refused_and_reopened(
    pipe: PipeInput, planner: RecordingPlanner, tmp_path: Path
) -> None:
    def overlap(text: str) -> str:  # task_3 becomes a second writer of src/app.py, unordered with task_2
        return text.replace("## task_3 [COMMAND] after: task_2", "## task_3 [FILE_WRITE]").replace(
            'action: execute_command {"command": "pytest -q"}', "files: src/app.py"
        )

    def serialise(text: str) -> str:
        return text.replace("## task_3 [FILE_WRITE]", "## task_3 [FILE_WRITE] after: task_2")

    edits = ScriptedEdits(overlap, serialise)
    screen = Screen(pipe, planner, edit_text=edits, plan=contract_plan(), facts=contract_facts(tmp_path))
    await screen.shows("Level 3")
    pipe.send_text("e")
    await screen.shows("The edited plan is not valid")
    shown = " ".join(screen.text.split())
    assert "task_2" in shown.split("not valid")[1] and "task_3" in shown.split("not valid")[1]
    pipe.send_text("e")  # reopened with the user's text, fixed by ordering task_3 after task_2
    await screen.shows("Level 3", count=2)
    pipe.send_text("\r")
    plan = await screen.result()
    assert edits.opened[1] == overlap(edits.opened[0])
    assert plan is not None and plan.task("task_3").files == ["src/app.py"]
    assert plan.task("task_3").dependencies == ["task_2"]


async def test_an_edit_giving_a_read_task_files_or_a_write_action_is_refused(
    pipe: PipeInput, planner: RecordingPlanner, tmp_path: Path
) -> None:
    def breaks(text: str) -> str:
        return text.replace(
            'action: read_file {"path": "src/app.py"}', 'action: write_file {"path": "src/app.py", "content": ""}'
        )

    screen = Screen(
        pipe, planner, edit_text=ScriptedEdits(breaks), plan=contract_plan(), facts=contract_facts(tmp_path)
    )
    await screen.shows("Level 3")
    pipe.send_text("e")
    await screen.shows("The edited plan is not valid")
    assert "write_file" in screen.text.split("not valid")[1]
    pipe.send_text("\x1b")
    await screen.shows("Back to the plan")
    pipe.send_text("\r")
    assert await screen.result() == contract_plan()  # nothing of the broken edit was applied


async def test_an_amend_marks_its_new_and_changed_tasks_and_names_the_removed_ones(pipe: PipeInput) -> None:
    async def amend(plan: Plan, supplement: str) -> Plan:
        amended = plan.model_copy(deep=True)
        amended.tasks[1].description = "Add GET /health and GET /ready"
        amended.tasks[2] = Task(
            id="task_4", description=supplement, type=TaskType.VERIFICATION, dependencies=["task_2"]
        )
        return amended

    screen = Screen(pipe, amend)
    await screen.shows("Level 3")
    pipe.send_text("i")
    pipe.send_text("check both endpoints\r")
    await screen.shows("removed: task_3")
    amended = "\n".join(line.rstrip() for line in screen.text[screen.text.rindex("Plan") :].splitlines())
    assert "○ task_1 READ\n" in amended  # unchanged: no mark
    assert "○ task_2 WRITE after task_1 [changed]" in amended
    assert "○ task_4 CHECK after task_2 [new]" in amended
    pipe.send_text("\x0f")  # Ctrl+O shows the same plan: the marks stay
    await screen.shows("[new]", count=2)
    pipe.send_text("\r")
    plan = await screen.result()
    assert plan is not None and plan.ids() == ["task_1", "task_2", "task_4"]


async def test_amending_shows_a_timer_and_esc_still_cancels(pipe: PipeInput, planner: RecordingPlanner) -> None:
    screen = Screen(pipe, planner)
    await screen.shows("Level 3")
    mark = screen.mark()
    pipe.send_text("i")
    await screen.prompts_for("Add to the plan", after=mark)
    pipe.send_text("slow\r")
    await screen.prompts_for("Amending the plan…", after=mark)
    await until(
        lambda: re.search(r"Amending the plan…(\x1b\[[0-9;]*m)* \d+\.\ds", screen.prompts.getvalue()), "a timer", screen
    )
    await screen.prompts_for("cancels", after=mark)
    pipe.send_text("\x1b")
    await screen.shows("Amending cancelled")
    pipe.send_text("\r")
    plan = await screen.result()
    assert plan is not None and plan.ids() == ["task_1", "task_2", "task_3"] and "[new]" not in screen.text
