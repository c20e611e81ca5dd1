"""A FILE_WRITE task ends once its declared files are written whole: no closing "I wrote it" request
(issue 10: one reply fewer on the plan's critical path). Anything less certain ends as before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from paicli.agent.react import FinishWhen
from paicli.llm.types import ToolCall
from paicli.plan.executor import files_written
from paicli.plan.model import Task, TaskType
from paicli.tools.base import ToolOutcome
from tests.conftest import paicli_env, run_paicli
from tests.fakellm import FakeLLM, Reply, all_of, has_tool_result
from tests.plan_script import PLANNER, requests_of, script_summary, system_is, task_is


def writer(*files: str, type: TaskType = TaskType.FILE_WRITE) -> Task:
    return Task(id="w", description="write", type=type, files=list(files))


def call(name: str, ok: bool = True, **arguments: Any) -> tuple[ToolCall, ToolOutcome]:
    raw = json.dumps(arguments)
    output = f"wrote 10 bytes to {arguments.get('path')} (created)" if ok else "refused: out of scope"
    return ToolCall(id=f"c_{name}", name=name, arguments=raw), ToolOutcome(ok=ok, output=output, arguments=arguments)


def reply(finish: FinishWhen, *pairs: tuple[ToolCall, ToolOutcome]) -> str | None:
    return finish([c for c, _ in pairs], [o for _, o in pairs])


def test_one_reply_writing_every_declared_file_whole_ends_the_task_with_the_tool_results() -> None:
    finish = files_written(writer("NEW.md", "docs/b.md"))
    assert finish is not None
    done = reply(finish, call("write_file", path="./NEW.md", content="a"), call("write_file", path="docs/b.md"))
    assert done == "wrote 10 bytes to ./NEW.md (created)\nwrote 10 bytes to docs/b.md (created)"


def test_declared_files_written_over_several_replies_end_it_at_the_last_write() -> None:
    finish = files_written(writer("a.py", "b.py"))
    assert finish is not None
    assert reply(finish, call("write_file", path="a.py")) is None  # b.py is still to come
    assert reply(finish, call("read_file", path="c.py")) is None
    assert reply(finish, call("write_file", path="b.py")) == "wrote 10 bytes to b.py (created)"


def test_anything_short_of_whole_successful_writes_of_every_file_asks_the_model_to_finish() -> None:
    finish = files_written(writer("a.py"))
    assert finish is not None
    assert reply(finish, call("edit_file", path="a.py", old_text="x", new_text="y")) is None  # an edit: maybe more
    assert reply(finish, call("write_file", ok=False, path="a.py")) is None  # it failed
    assert reply(finish, call("write_file", path="b.py")) is None  # not the declared file (the gate refuses it)
    assert reply(finish, call("write_file", path="/abs/a.py")) is None  # not a workspace-relative name
    assert reply(finish, call("write_file", path="../w/a.py")) is None


def test_a_reply_that_also_did_something_else_does_not_end_it() -> None:
    finish = files_written(writer("a.py"))
    assert finish is not None
    refused = call("write_file", ok=False, path="setup.py")
    assert reply(finish, call("write_file", path="a.py"), refused) is None  # the model must hear of the refusal
    assert reply(finish, call("write_file", path="a.py"), call("read_file", path="a.py")) is None


def test_only_file_write_tasks_with_exact_files_end_early() -> None:
    assert files_written(writer("src/")) is None  # a folder: no way to know when it is complete
    assert files_written(writer("a.py", "src/")) is None
    assert files_written(Task(id="w", description="d", type=TaskType.FILE_WRITE)) is None  # a plan from before
    assert files_written(writer("a.py", type=TaskType.COMMAND)) is None


def plan_of(*files: str) -> str:
    task = {"id": "t1", "description": "write", "type": "FILE_WRITE", "dependencies": [], "files": list(files)}
    return json.dumps({"summary": "the plan", "tasks": [task]})


def test_end_to_end_the_write_task_makes_one_request_and_its_result_says_what_was_written(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    fake.on(system_is(PLANNER), Reply.text(plan_of("NOTES.md")))
    fake.on(
        task_is("t1"),
        Reply.tool_calls([("write_file", {"path": "NOTES.md", "content": "notes\n"})], content="Writing it."),
    )
    script_summary(fake)
    done = run_paicli(["-C", str(workspace), "plan", "write notes", "--yes", "--json"], paicli_env(fake, home))
    assert done.code == 0, done.stderr
    assert (workspace / "NOTES.md").read_text() == "notes\n"
    assert len(requests_of(fake, "t1")) == 1
    (finished,) = done.of("task_finished")
    assert finished["status"] == "COMPLETED"
    assert finished["result"].startswith("Writing it.\nwrote 6 bytes to NOTES.md")


def test_end_to_end_an_edit_still_gets_the_models_answer(fake: FakeLLM, workspace: Path, home: Path) -> None:
    (workspace / "app.py").write_text("x = 1\n")
    fake.on(system_is(PLANNER), Reply.text(plan_of("app.py")))
    fake.on(all_of(task_is("t1"), has_tool_result("edit_file")), Reply.text("x is 2 now"))
    fake.on(task_is("t1"), Reply.tool_calls([("edit_file", {"path": "app.py", "old_text": "1", "new_text": "2"})]))
    script_summary(fake)
    done = run_paicli(["-C", str(workspace), "plan", "set x", "--yes", "--json"], paicli_env(fake, home))
    assert done.code == 0, done.stderr
    assert (workspace / "app.py").read_text() == "x = 2\n"
    assert len(requests_of(fake, "t1")) == 2
    assert done.of("task_finished")[0]["result"] == "x is 2 now"
