import pytest

import ring
from ring import RingBuffer


def test_fifo():
    buf = RingBuffer(3)
    for x in (1, 2, 3):
        assert buf.push(x) is None
    with pytest.raises(IndexError):
        buf.push(4)
    assert buf.peek() == 1 and buf.pop() == 1 and list(buf) == [2, 3] and len(buf) == 2
    buf.push(4)
    assert list(buf) == [2, 3, 4] and [buf.pop() for _ in range(3)] == [2, 3, 4]
    with pytest.raises(IndexError):
        buf.pop()
    with pytest.raises(IndexError):
        buf.peek()


def test_overwrite():
    buf = RingBuffer(2, overwrite=True)
    buf.push("a")
    buf.push("b")
    assert buf.push("c") == "a" and list(buf) == ["b", "c"]
    assert repr(buf) == "RingBuffer(['b', 'c'], capacity=2)"


def test_wraps_many_times():
    buf = RingBuffer(4)
    expected = []
    for i in range(100):
        buf.push(i)
        expected.append(i)
        if i % 3 == 0:
            assert buf.pop() == expected.pop(0)
        if len(buf) == 4:
            assert buf.pop() == expected.pop(0)
        assert list(buf) == expected


def test_clear_and_bad_capacity():
    buf = RingBuffer(2)
    buf.push(1)
    buf.clear()
    assert len(buf) == 0 and list(buf) == [] and repr(buf) == "RingBuffer([], capacity=2)"
    with pytest.raises(ValueError):
        RingBuffer(0)


def test_constant_time_source():
    source = open(ring.__file__, encoding="utf-8").read()
    assert "pop(0)" not in source and "insert(0" not in source
