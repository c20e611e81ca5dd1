"""`paicli eval run` as a user runs it: Ctrl+C stops a running eval cleanly (exit 130, its agents ended,
the finished runs kept), and a rerun into the same folder runs only the rest, `--jobs 4` at a time, until
every run is recorded exactly once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.conftest import TEST_KEY, paicli_env
from tests.eval.suites import answer_task, eval_env, json_lines, results, run_eval, script_writer, write_suite
from tests.fakellm import FakeLLM, Reply
from tests.sandboxing import require_bwrap


def processes_holding(text: str) -> list[int]:
    """Pids whose command line holds `text` somewhere."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                if text.encode() in handle.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found


def test_ctrl_c_keeps_what_finished_and_a_rerun_does_the_rest_four_at_a_time(
    fake: FakeLLM, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    require_bwrap()
    tag = uuid.uuid4().hex[:8]
    ids = [f"t{number}-{tag}" for number in range(12)]
    suite = write_suite(tmp_path / "suite", [answer_task(task_id) for task_id in ids])
    for task_id in ids:
        script_writer(fake, f"for {task_id}", "answer.txt", "42\n", then=Reply.text("Done.", latency=0.3))
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "paicli", "eval", "run", str(suite), "--mode", "chat", "--jobs", "2", "--json"]
    eval_process = subprocess.Popen(
        [*argv, "--out", str(out)],
        env=paicli_env(fake, home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert eval_process.stdout is not None
    seen = []
    for line in eval_process.stdout:
        seen.append(line)
        if sum('"eval_run_finished"' in said for said in seen) == 2:
            break
    eval_process.send_signal(signal.SIGINT)
    rest, _ = eval_process.communicate(timeout=60)
    assert eval_process.returncode == 130
    events = json_lines("".join(seen) + rest)
    assert events[-1]["event"] == "eval_finished" and events[-1]["cancelled"] is True
    kept = results(out)
    assert len(kept) == events[-1]["done"] >= 2 and all(r["outcome"] == "pass" for r in kept)
    assert processes_holding(tag) == []  # no agent (its goal names the tag) outlived the eval
    # paicli moved the key out of its environment at start-up (secret_handoff.py): the agents got it all the same
    assert {request.headers.get("authorization") for request in fake.requests} == {f"Bearer {TEST_KEY}"}

    eval_env(monkeypatch, fake, home)
    capsys.readouterr()
    assert run_eval([str(suite), "--mode", "chat", "--jobs", "4", "--json", "--out", str(out)]) == 0
    events = json_lines(capsys.readouterr().out)
    assert events[0] == {**events[0], "total": 12 - len(kept), "skipped": len(kept)}
    running, most = 0, 0
    for event in events:
        running += {"eval_run_started": 1, "eval_run_finished": -1}.get(event["event"], 0)
        most = max(most, running)
    assert most == min(4, 12 - len(kept))
    recorded = results(out)
    assert sorted(r["task"] for r in recorded) == sorted(ids)  # every run once
    assert all(r["outcome"] == "pass" for r in recorded)


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--jobs", "0"], "--jobs takes 1 to 256, --repeat 1 to 1000"),
        (["--repeat", "100000"], "--jobs takes 1 to 256, --repeat 1 to 1000"),
        (["--mode", "plan,react"], "--mode: 'react' is not a mode"),
        (["--out", "{suite}/t/start/out"], "is inside task t's starting state: the agents would see it"),
    ],
)
def test_bad_options_are_one_line_and_run_nothing(
    extra: list[str],
    said: str,
    home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    suite = write_suite(tmp_path / "suite", [answer_task("t")])
    monkeypatch.setenv("HOME", str(home))
    argv = [str(suite), "--base-url", "http://127.0.0.1:9/v1", *(a.format(suite=suite.parent) for a in extra)]
    assert run_eval(argv) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert said in line
    assert not (suite.parent / "t" / "start" / "out").exists()
