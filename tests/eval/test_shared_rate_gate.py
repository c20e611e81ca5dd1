"""The agents of one `paicli eval run --jobs 2` share their rate limits end to end: two real `paicli run`
subprocesses against one fake server, and the 429 one of them gets (Retry-After: 1) holds the other's next
request back until that time, through the gate folder the eval gives them (paicli/llm/shared_gate.py),
though the other was never rate limited itself."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import pytest

from tests.eval.suites import answer_task, eval_env, results, run_eval, write_suite
from tests.fakellm import FakeLLM, RecordedRequest, Reply, any_request, has_tool_result
from tests.sandboxing import require_bwrap

RETRY_AFTER = 1.0  # seconds, as the server says it
PATIENCE = 10.0  # seconds the held reply waits for the gate file before it goes anyway (and the test fails)


class GateFile:
    """What the agents wrote into the eval's rate-gate folder, read from this process: the first closing
    time seen (wall clock) and that time on the fake's clock (time.monotonic)."""

    def __init__(self, temp: Path) -> None:
        self.temp = temp
        self.content: str | None = None
        self.until = 0.0
        self.give_up = time.monotonic() + PATIENCE

    def written(self) -> bool:
        """True once the file is there (or, for a failing test that does not hang, once PATIENCE is spent)."""
        if self.content is None:
            for path in self.temp.glob("paicli-eval-*/rate-gate/*.until"):
                try:
                    content = path.read_text()
                    until = float(content)
                except (OSError, ValueError):
                    continue
                self.content, self.until = content, until - (time.time() - time.monotonic())
        return self.content is not None or time.monotonic() > self.give_up


def of(requests: list[RecordedRequest], task: str) -> list[RecordedRequest]:
    """The requests of the agent of `task` (its goal, answer_task's, is in every request it sends)."""
    return [request for request in requests if f"write the answer for {task}" in request.text]


def test_a_429_one_agent_gets_holds_the_other_agent_back_until_its_retry_time(
    fake: FakeLLM, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_bwrap()
    temp = tmp_path / "tmp"  # the eval's own temporary folder (and so its rate-gate folder) goes here
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    gate = GateFile(temp)
    suite = write_suite(tmp_path / "suite", [answer_task("a"), answer_task("b")])
    write = Reply.tool_calls([("write_file", {"path": "answer.txt", "content": "42\n"})])
    limited = Reply.error(429, "slow down", headers={"Retry-After": f"{RETRY_AFTER:g}"})
    fake.on(has_tool_result("write_file"), Reply.text("Done."), repeat=True)
    # The first agent to ask gets its answer only once the other's 429 is in the gate file; the other's
    # first request is the one rate limited, and its retry is answered.
    fake.on(any_request, write.after(gate.written), limited, write, repeat=True)
    eval_env(monkeypatch, fake, home)
    out = tmp_path / "out"
    assert run_eval([str(suite), "--mode", "chat", "--jobs", "2", "--out", str(out)]) == 0
    assert {record["task"]: record["outcome"] for record in results(out)} == {"a": "pass", "b": "pass"}

    requests = fake.requests
    [refused] = [request for request in requests if request.status == 429]
    limited_task = "a" if of([refused], "a") else "b"
    held_task = "b" if limited_task == "a" else "a"
    first, after = of(requests, held_task)  # the held agent: its write, then its "Done." after the result
    assert first.status == after.status == 200  # never rate limited itself
    assert [request.status for request in of(requests, limited_task)] == [429, 200, 200]
    assert first.finished is not None
    assert gate.content is not None and gate.until >= refused.started + RETRY_AFTER - 0.05  # the server's time
    # Free to go on the moment its answer came, it waited for the other's retry time instead.
    assert first.finished < gate.until - RETRY_AFTER / 2
    assert after.started >= gate.until - 0.02  # clock sampling between the two processes
