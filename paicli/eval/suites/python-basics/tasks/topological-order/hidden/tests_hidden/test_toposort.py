import pytest

from toposort import CycleError, order


def test_order():
    assert order({"app": {"lib", "log"}, "lib": {"log"}, "log": set()}) == ["log", "lib", "app"]
    assert order({"b": set(), "a": set(), "c": {"a"}}) == ["a", "b", "c"]
    assert order({"x": {"y"}}) == ["y", "x"]
    assert order({}) == []


def test_ties_are_alphabetical():
    assert order({"z": set(), "m": {"z"}, "a": {"z"}}) == ["z", "a", "m"]


def test_cycle():
    with pytest.raises(CycleError) as caught:
        order({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()})
    cycle = caught.value.cycle
    assert cycle[0] == cycle[-1] and sorted(cycle[:-1]) == ["a", "b", "c"]
    deps = {"a": {"b"}, "b": {"c"}, "c": {"a"}}
    assert all(cycle[i + 1] in deps[cycle[i]] for i in range(len(cycle) - 1))
    assert isinstance(caught.value, ValueError)


def test_self_loop():
    with pytest.raises(CycleError) as caught:
        order({"a": {"a"}})
    assert caught.value.cycle == ["a", "a"]
