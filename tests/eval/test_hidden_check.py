"""Nothing of a hidden check reaches the agent: with the suite in a folder its sandbox could otherwise read
(under HOME), neither its file tools nor its commands read the hidden check or the suite file, and no
request to the model carries the marker planted in the check; the check itself, copied in afterwards,
sees it. Without a working sandbox `eval run` refuses to start."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest

from tests.eval.suites import answer_task, eval_env, results, run_eval, script_writer, write_suite
from tests.fakellm import FakeLLM, Reply, has_tool_result
from tests.sandboxing import require_bwrap


def test_the_hidden_check_is_out_of_the_agents_reach(
    fake: FakeLLM, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_bwrap()
    marker = f"HIDDEN-CHECK-{uuid.uuid4().hex}"
    visible = f"VISIBLE-{uuid.uuid4().hex}"
    (home / "visible.txt").write_text(visible + "\n")
    suites = home / "suites" / "s"
    task = {
        "id": "peek",
        "goal": "peek at the check",
        "files": {"app.py": "x = 1\n"},
        "hidden": {"test_secret.py": f"# {marker}\n"},
        "check": f"grep -q {marker} test_secret.py",
    }
    suite = write_suite(suites, [task])
    hidden_file = suites / "peek" / "hidden" / "test_secret.py"
    assert marker in hidden_file.read_text()  # there, and readable by this process
    pattern = "HIDDEN-CHECK-[0-9a-f]{32}"  # finds the marker without naming it
    command = (
        f"cat {hidden_file} {suite}; ls -R {suites}; cat {home}/visible.txt; "
        f"grep -rEo '{pattern}' {home} /tmp 2>/dev/null | head -5; true"
    )
    fake.on(has_tool_result("execute_command"), Reply.text("Done."), repeat=True)
    calls = [
        ("read_file", {"path": str(hidden_file)}),
        ("read_file", {"path": str(suite)}),
        ("grep_code", {"pattern": pattern, "path": str(suites)}),
        ("execute_command", {"command": command}),
    ]
    fake.on("peek at the check", Reply.tool_calls(calls), repeat=True)
    eval_env(monkeypatch, fake, home)
    out = home / "out"
    assert run_eval([str(suite), "--mode", "chat", "--out", str(out)]) == 0
    [record] = results(out)
    assert record["outcome"] == "pass"  # the check, copied in after the agent, found the marker
    assert len(fake.requests) == 2
    answered = fake.requests[1].text
    assert visible in answered  # the command ran and read what is not hidden under HOME
    assert all(marker not in request.text for request in fake.requests)
    assert "test-suite" not in answered  # nor the suite file (its name line)


def test_without_a_sandbox_eval_refuses_unless_unsandboxed(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_suite(tmp_path / "suite", [{"id": "t", "goal": "g", "files": {"a": ""}, "hidden": {"b": ""}}])
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # no bwrap to be found
    monkeypatch.setenv("HOME", str(home))
    out = tmp_path / "out"
    assert run_eval([str(suite), "--out", str(out), "--base-url", "http://127.0.0.1:9/v1"]) == 2
    said = capsys.readouterr().err.strip().splitlines()
    assert len(said) == 1 and said[0].startswith("paicli: eval runs the agents' commands and the hidden checks in a")
    assert "--unsandboxed" in said[0]
    assert not (out / "results.jsonl").exists()


def test_unsandboxed_runs_where_bubblewrap_cannot_be_found(
    fake: FakeLLM, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--unsandboxed` where bubblewrap cannot be found: the agent runs with `--sandbox off`, the check
    uncontained, and the run is recorded as any other."""
    bin_folder = tmp_path / "bin"  # the commands a check needs, and no bwrap
    bin_folder.mkdir()
    for program in ("bash", "cat", "grep"):
        found = shutil.which(program)
        assert found is not None
        (bin_folder / program).symlink_to(found)
    suite = write_suite(tmp_path / "suite", [answer_task("loose")])
    script_writer(fake, "for loose", "answer.txt", "42\n")
    eval_env(monkeypatch, fake, home)
    monkeypatch.setenv("PATH", str(bin_folder))
    out = tmp_path / "out"
    assert run_eval([str(suite), "--mode", "chat", "--out", str(out), "--unsandboxed"]) == 0
    [record] = results(out)
    assert record["outcome"] == "pass" and record["files_changed"] == ["answer.txt"]


def test_an_agent_cannot_read_the_check_another_run_has_in_place(
    fake: FakeLLM, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With `--jobs 2` one run's check runs in its agent's folder while the other agent still works: that
    agent's commands look for the check's marker everywhere while it is there, and find nothing."""
    require_bwrap()
    marker = f"HIDDEN-CHECK-{uuid.uuid4().hex}"
    pattern = "HIDDEN-CHECK-[0-9a-f]{32}"
    checked = answer_task("quick")
    checked["hidden"] = {**checked["hidden"], "secret.txt": marker + "\n"}
    checked["check"] = f"grep -q {marker} secret.txt && sleep 5 && grep -qx 42 answer.txt"  # in place for 5 s
    peek = {"id": "peek", "goal": "peek at the other run", "files": {"a.txt": "\n"}, "hidden": {"h": ""}}
    peek["check"] = "true"
    suite = write_suite(tmp_path / "suite", [checked, peek])
    script_writer(fake, "for quick", "answer.txt", "42\n")
    places = f"/tmp/paicli-eval-* /tmp /var/tmp {home}"  # the runs' folders first: /tmp may be large
    command = f"sleep 2.5; grep -rEo '{pattern}' {places} 2>/dev/null | head -3; echo looked-$((6 * 7))"
    fake.on(has_tool_result("execute_command"), Reply.text("Done."), repeat=True)
    fake.on("peek at the other run", Reply.tool_calls([("execute_command", {"command": command})]), repeat=True)
    eval_env(monkeypatch, fake, home)
    out = tmp_path / "out"
    assert run_eval([str(suite), "--mode", "chat", "--jobs", "2", "--out", str(out)]) == 0
    outcomes = {record["task"]: record["outcome"] for record in results(out)}
    assert outcomes == {"quick": "pass", "peek": "pass"}  # the marker was in place for the check
    assert any("looked-42" in request.text for request in fake.requests)  # the command ran, the model saw it
    assert all(marker not in request.text for request in fake.requests)
