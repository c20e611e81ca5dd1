import pytest

from cache import ExpiringCache


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_expiry():
    clock = Clock()
    cache = ExpiringCache(10, 5.0, clock=clock)
    cache.set("a", 1)
    clock.now += 4.9
    assert cache.get("a") == 1 and "a" in cache
    clock.now += 0.2
    assert cache.get("a") is None and cache.get("a", "gone") == "gone" and "a" not in cache
    assert len(cache) == 0


def test_reads_do_not_extend_life():
    clock = Clock()
    cache = ExpiringCache(10, 5.0, clock=clock)
    cache.set("a", 1)
    for _ in range(5):
        clock.now += 1.2
        cache.get("a")
    assert "a" not in cache


def test_capacity_evicts_least_recently_used():
    clock = Clock()
    cache = ExpiringCache(2, 50.0, clock=clock)
    cache.set("a", 1)
    cache.set("b", 2)
    cache.get("a")
    cache.set("c", 3)
    assert "b" not in cache and cache.get("a") == 1 and cache.get("c") == 3
    cache.set("a", 10)
    cache.set("d", 4)
    assert "c" not in cache and cache.get("a") == 10 and len(cache) == 2


def test_purge_counts():
    clock = Clock()
    cache = ExpiringCache(5, 1.0, clock=clock)
    cache.set("a", 1)
    cache.set("b", 2)
    clock.now += 2
    assert cache.purge() == 2 and len(cache) == 0
    cache.set("c", 3)
    assert cache.purge() == 0 and len(cache) == 1


@pytest.mark.parametrize(("capacity", "ttl"), [(0, 1.0), (3, 0), (3, -1.0)])
def test_bad_arguments(capacity, ttl):
    with pytest.raises(ValueError):
        ExpiringCache(capacity, ttl)
