"""The endpoint's rate gate and adaptive concurrency limit, on their own (a settable clock where time
matters; real asyncio waits elsewhere). Over HTTP: tests/llm/test_rate_limits.py."""

from __future__ import annotations

import asyncio

import pytest

from paicli.llm.concurrency import AdaptiveLimit
from paicli.llm.endpoint import Endpoint, RateStatus
from paicli.llm.rate_gate import RateBudgetSpent, RateGate
from paicli.llm.retry import Backoff


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def test_an_open_gate_lets_every_request_through() -> None:
    gate = RateGate()
    assert [await gate.wait_turn() for _ in range(3)] == [False, False, False]
    assert gate.retry_in() is None


async def test_a_closed_gate_sends_one_probe_when_its_time_has_come_and_holds_the_rest() -> None:
    clock = Clock()
    gate = RateGate(clock=clock)
    closing = gate.limited(4.0, probe=False)
    assert closing.wait == 4.0 and closing.news and gate.retry_in() == 4.0
    assert not gate.limited(2.0, probe=False).news  # a second report confirms; the later time stays
    assert gate.retry_in() == 4.0
    with pytest.raises(RateBudgetSpent):  # would still be closed at the deadline
        await gate.wait_turn(deadline=clock.now + 1)
    clock.now += 4.0
    assert await gate.wait_turn() is True  # the probe
    waiter = asyncio.create_task(gate.wait_turn())
    await asyncio.sleep(0.01)
    assert not waiter.done() and gate.retry_in() == 0.0  # held while the probe is out
    gate.passed(probe=True)
    assert await asyncio.wait_for(waiter, 1) is False
    assert gate.probes == 1 and not gate.closed


async def test_a_late_success_of_a_request_sent_before_the_closure_does_not_open_it() -> None:
    gate = RateGate(clock=Clock())
    gate.limited(1.0, probe=False)
    gate.passed(probe=False)
    assert gate.closed


async def test_a_probe_rate_limited_again_closes_the_gate_with_a_longer_backoff() -> None:
    clock = Clock()
    gate = RateGate(Backoff(base=1.0, cap=30.0, random=lambda: 1.0), clock)
    assert gate.limited(None, probe=False).wait == 1.0
    clock.now += 1.0
    assert await gate.wait_turn() is True
    assert gate.limited(None, probe=True).wait == 2.0
    clock.now += 2.0
    assert await gate.wait_turn() is True
    assert gate.limited(None, probe=True).wait == 4.0


async def test_a_cancelled_probe_hands_the_turn_to_the_next_request() -> None:
    clock = Clock()
    gate = RateGate(clock=clock)
    gate.limited(0.0, probe=False)
    clock.now += 1.0  # past the backoff added to a zero wait
    assert await gate.wait_turn() is True
    waiter = asyncio.create_task(gate.wait_turn())
    await asyncio.sleep(0.01)
    gate.abandon(probe=True)
    assert await asyncio.wait_for(waiter, 1) is True


async def test_waiting_at_the_gate_is_cancelled_at_once() -> None:
    gate = RateGate()
    gate.limited(60.0, probe=False)
    waiter = asyncio.create_task(gate.wait_turn())
    await asyncio.sleep(0.01)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert not gate._waiters


async def test_the_limit_halves_once_per_episode_and_grows_back_by_one_per_window() -> None:
    limit = AdaptiveLimit(12)
    slots = [await limit.acquire() for _ in range(12)]
    assert limit.limited(slots[0]) and limit.limit == 6
    assert not limit.limited(slots[1])  # sent before the cut: the same episode
    for _ in slots:
        limit.release()
    probe = await limit.acquire()
    assert limit.limited(probe) and limit.limit == 3
    limit.release()
    for _ in range(3):
        limit.succeeded()
    assert limit.limit == 4
    for _ in range(4):
        limit.succeeded()
    assert limit.limit == 5
    one = AdaptiveLimit(1)
    assert one.limited(await one.acquire()) and one.limit == 1  # never below one


async def test_requests_over_the_limit_wait_in_order_and_a_cancelled_one_leaves_no_trace() -> None:
    limit = AdaptiveLimit(1)
    await limit.acquire()
    second = asyncio.create_task(limit.acquire())
    third = asyncio.create_task(limit.acquire())
    await asyncio.sleep(0.01)
    second.cancel()
    await asyncio.sleep(0.01)
    limit.release()
    await asyncio.wait_for(third, 1)
    assert limit.in_flight == 1 and not limit._queue


async def test_the_endpoint_reports_what_is_held_back() -> None:
    clock = Clock()
    endpoint = Endpoint(max_in_flight=12, clock=clock)
    assert endpoint.status() is None
    admission = await endpoint.admit()
    endpoint.finish(admission, "limited", 4.0)
    status = endpoint.status()
    assert status == RateStatus(limit=6, maximum=12, retry_in=4.0)
    assert status.line() == "rate limited: 6 of 12 running, retry in 4 s"
    clock.now += 4.0
    probe = await endpoint.admit()
    assert probe.probe
    endpoint.finish(probe, "ok")
    assert endpoint.status() == RateStatus(limit=6, maximum=12, retry_in=None)
    assert endpoint.status() is not None and endpoint.status().line() == "rate limited: 6 of 12 running"  # type: ignore[union-attr]


async def test_a_server_that_keeps_saying_zero_is_still_probed_about_once_a_second() -> None:
    clock = Clock()
    gate = RateGate(Backoff(base=1.0, cap=30.0, random=lambda: 0.0), clock)
    assert gate.limited(0.0, probe=False).wait == 0.0  # the server's word, the first time
    assert await gate.wait_turn() is True
    assert gate.limited(0.0, probe=True).wait == 0.5  # then a backoff that grows, but adds at most a second
    clock.now += 0.5
    assert await gate.wait_turn() is True
    assert gate.limited(0.0, probe=True).wait == 1.0
    clock.now += 1.0
    assert await gate.wait_turn() is True
    assert gate.limited(0.0, probe=True).wait == 1.0
    assert gate.limited(3.0, probe=False).wait == 3.0  # a longer time the server names is honoured as it is


async def test_a_request_past_its_deadline_does_not_probe() -> None:
    clock = Clock()
    gate = RateGate(clock=clock)
    gate.limited(1.0, probe=False)
    clock.now += 2.0
    with pytest.raises(RateBudgetSpent):
        await gate.wait_turn(deadline=clock.now - 0.5)
    assert not gate.probe_out and gate.probes == 0
