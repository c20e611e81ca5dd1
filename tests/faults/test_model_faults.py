"""A model that sends broken tool calls, end to end (`paicli` as a subprocess, the fake model over HTTP).

Every call gets an answer in the wire format, the broken ones an error the model can act on; a model that
only sends broken calls ends the turn or task with a clear status. Unit tests of each case:
tests/tools/test_toolbox.py (parsing and validation) and tests/agent/test_react.py (the loop's limits).
"""

from __future__ import annotations

import json
from pathlib import Path

from paicli.policy.audit import audit_folder, read_entries
from tests.conftest import paicli_env, run_paicli
from tests.fakellm import FakeLLM, Reply, all_of, has_tool_result
from tests.plan_script import PLANNER, plan_json, script_summary, system_is, task_is

BROKEN_AND_GOOD = [
    ("read_file", '{"path": "a.txt"', "c_truncated"),
    ("read_file", json.dumps(json.dumps({"path": "a.txt"})), "c_double_encoded"),
    ("write_file", '{"path": "b.txt", "content": "hel', "c_cut_write"),
    ("delete_everything", "{}", "c_unknown_tool"),
    ("read_file", '{"path": 42}', "c_wrong_type"),
    ("list_dir", '{"path": ".", "recursive": true}', "c_extra_field"),
    ("read_file", "[]", "c_not_an_object"),
    ("read_file", '{"path": "a.txt"}', "c_good"),
]
EXPECTED = {
    "c_truncated": (False, "not valid JSON"),
    "c_double_encoded": (True, "hello"),
    "c_cut_write": (False, "not valid JSON"),
    "c_unknown_tool": (False, "unknown tool 'delete_everything'"),
    "c_wrong_type": (False, "'path'"),
    "c_extra_field": (False, "unexpected argument 'recursive'"),
    "c_not_an_object": (False, "must be a JSON object"),
    "c_good": (True, "hello"),
}


def test_every_broken_call_is_answered_and_the_turn_goes_on(fake: FakeLLM, workspace: Path, home: Path) -> None:
    (workspace / "a.txt").write_text("hello\n")
    fake.on(has_tool_result(), Reply.text("Some calls failed; a.txt says hello."))
    fake.on("read a.txt", Reply.tool_calls(BROKEN_AND_GOOD))

    done = run_paicli(["-C", str(workspace), "run", "read a.txt", "--json"], paicli_env(fake, home))

    assert done.code == 0, done.stderr
    assert not (workspace / "b.txt").exists()  # a cut-off write is never half applied
    answers = {m["tool_call_id"]: m["content"] for m in fake.requests[-1].messages if m["role"] == "tool"}
    assert list(answers) == list(EXPECTED)  # one answer per call, in order
    results = done.of("tool_result")
    for (call_id, (ok, text)), result in zip(EXPECTED.items(), results, strict=True):
        assert result["ok"] is ok and text in answers[call_id], (call_id, answers[call_id])
        assert ok or answers[call_id].startswith("Error: ")
    decisions = [e["decision"] for e in read_entries(audit_folder(home), 20)]
    assert decisions.count("invalid") == 6 and decisions.count("allowed") == 2


def test_a_model_that_keeps_sending_broken_calls_ends_the_run(fake: FakeLLM, workspace: Path, home: Path) -> None:
    fake.on("write it", Reply.tool_calls([("write_file", '{"path": "x.txt", "content": ')]), repeat=True)

    done = run_paicli(["-C", str(workspace), "run", "write it", "--json"], paicli_env(fake, home))

    assert done.code == 1
    assert "malformed tool calls 3 times in a row" in done.stderr
    assert len(fake.requests) == 3 and not (workspace / "x.txt").exists()


def test_a_plan_task_with_only_broken_calls_fails_with_a_clear_status(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    fake.on(system_is(PLANNER), Reply.text(plan_json({"task_1": [], "task_2": ["task_1"], "task_3": []})))
    fake.on(task_is("task_1"), Reply.tool_calls([("nonexistent_tool", "{oops")]), repeat=True)
    fake.on(all_of(task_is("task_3"), has_tool_result()), Reply.text("task 3 done"))
    fake.on(task_is("task_3"), Reply.tool_calls([("list_dir", {})]))
    script_summary(fake)

    args = ["-C", str(workspace), "plan", "do it", "--yes", "--json", "--max-replans", "0"]
    done = run_paicli(args, paicli_env(fake, home))

    assert done.code == 1, done.stderr
    finished = {e["task_id"]: e for e in done.of("task_finished")}
    assert finished["task_1"]["status"] == "FAILED"
    assert "malformed tool calls 3 times in a row" in finished["task_1"]["error"]
    assert finished["task_2"]["status"] == "SKIPPED"
    assert finished["task_3"]["status"] == "COMPLETED"  # independent work goes on
    assert done.of("plan_finished")[-1]["status"] == "FAILED"
