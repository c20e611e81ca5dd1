"""The runs of an eval: task x mode x model x repeat in a stable order, a shard's share, less those done."""

from __future__ import annotations

from pathlib import Path

import pytest

from paicli.common.errors import ConfigError
from paicli.eval.matrix import matrix, parse_modes, parse_shard, to_run
from paicli.eval.records import Suite, TaskSpec


def suite(ids: list[str]) -> Suite:
    tasks = tuple(TaskSpec(id=i, goal="g", start="s", hidden="h") for i in ids)
    return Suite(name="s", tasks=tasks, root=Path("/nowhere"))


def test_the_order_is_task_then_mode_then_model_then_repeat() -> None:
    runs = matrix(suite(["a", "b"]), ("plan", "chat"), ("m1", "m2"), 2)
    assert len(runs) == 16 and [r.index for r in runs] == list(range(16))
    first = [(r.key.task, r.key.mode, r.key.model, r.key.repeat) for r in runs[:3]]
    assert first == [("a", "plan", "m1", 0), ("a", "plan", "m1", 1), ("a", "plan", "m2", 0)]


def test_shards_split_the_runs_without_overlap_and_skip_what_is_done() -> None:
    runs = matrix(suite([f"t{i}" for i in range(7)]), ("chat",), ("m",), 1)
    shares = [to_run(runs, (k, 3), set()) for k in (1, 2, 3)]
    assert sorted(r.index for share in shares for r in share) == list(range(7))
    assert [r.index for r in shares[1]] == [1, 4]
    assert [r.index for r in to_run(runs, (2, 3), {runs[4].key})] == [1]


@pytest.mark.parametrize("text", ["0/2", "3/2", "1", "a/b", "1/0", "-1/2"])
def test_a_bad_shard_is_refused(text: str) -> None:
    with pytest.raises(ConfigError, match="K/N"):
        parse_shard(text)


def test_modes_are_plan_and_chat_only() -> None:
    assert parse_modes("chat, plan,chat") == ("chat", "plan")
    with pytest.raises(ConfigError, match="'react' is not a mode"):
        parse_modes("plan,react")
