"""A rate limit told across processes (paicli/llm/shared_gate.py): endpoints of different processes that
share a folder hold back while another was told to wait. Each Endpoint here stands for one process (its
own gate and limit); the folder is the only thing they share, as between the agents of `paicli eval`."""

from __future__ import annotations

from pathlib import Path

import pytest

from paicli.config import Settings
from paicli.eval.cli import agent_environment
from paicli.llm.endpoint import Endpoint
from paicli.llm.rate_gate import RateBudgetSpent
from paicli.llm.shared_gate import FOLDER_VARIABLE, MAX_WAIT, SharedClosure


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def endpoint(folder: Path, clock: Clock, wall: Clock) -> Endpoint:
    return Endpoint(clock=clock, shared=SharedClosure(folder, "http://127.0.0.1:1/v1", clock=wall))


async def test_a_rate_limit_one_process_gets_holds_the_others_back_until_its_time(tmp_path: Path) -> None:
    clock, wall = Clock(100.0), Clock(1_000_000.0)
    one, other = endpoint(tmp_path, clock, wall), endpoint(tmp_path, clock, wall)
    admitted = await one.admit()
    one.finish(admitted, "limited", retry_after=30.0)
    with pytest.raises(RateBudgetSpent) as held:  # the other was never limited itself, yet waits
        await other.admit(deadline=clock.now + 1)
    assert held.value.reopens_in == 30.0 and other.gate.failures == 0  # not counted as its own 429
    clock.now += 30.0
    wall.now += 30.0
    probe = await other.admit()
    assert probe.probe  # its own probe goes, as after its own 429
    other.finish(probe, "ok")
    assert not other.gate.closed


async def test_without_a_shared_folder_or_once_the_time_has_passed_nothing_is_held(tmp_path: Path) -> None:
    clock, wall = Clock(100.0), Clock(1_000_000.0)
    alone = Endpoint(clock=clock)
    admitted = await endpoint(tmp_path, clock, wall).admit()
    assert not admitted.probe and not alone.gate.closed
    SharedClosure(tmp_path, "http://127.0.0.1:1/v1", clock=wall).close_for(5.0)
    assert not (await alone.admit()).probe  # not sharing: not held
    wall.now += 6.0
    assert not (await endpoint(tmp_path, clock, wall).admit()).probe  # the time has passed


def test_another_endpoint_a_bad_file_or_a_time_too_far_ahead_is_not_believed(tmp_path: Path) -> None:
    wall = Clock(1_000_000.0)
    mine = SharedClosure(tmp_path, "http://127.0.0.1:1/v1", clock=wall)
    theirs = SharedClosure(tmp_path, "http://127.0.0.1:2/v1", clock=wall)
    theirs.close_for(10.0)
    assert mine.remaining() == 0.0 and theirs.remaining() == 10.0
    theirs.close_for(3.0)  # a shorter time does not shorten the closing
    assert theirs.remaining() == 10.0
    for content in ("not a number", "", f"{wall.now + MAX_WAIT + 60}"):
        mine.path.write_text(content)
        assert mine.remaining() == 0.0


def test_the_variable_names_an_absolute_folder_and_eval_sets_it_for_its_agents(tmp_path: Path) -> None:
    assert SharedClosure.from_environ({FOLDER_VARIABLE: "relative/dir"}, "u") is None
    assert SharedClosure.from_environ({}, "u") is None
    assert SharedClosure.from_environ({FOLDER_VARIABLE: str(tmp_path)}, "u") is not None
    settings = Settings(workspace=tmp_path, base_url="http://127.0.0.1:1/v1")
    assert agent_environment(settings, tmp_path / "gate")[FOLDER_VARIABLE] == str(tmp_path / "gate")
