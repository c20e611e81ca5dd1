import random

import pytest

from intervals import merge, total_length


def test_examples():
    assert merge([(5, 8), (1, 3), (2, 4)]) == [(1, 4), (5, 8)]
    assert merge([(1, 3), (3, 5)]) == [(1, 5)]
    assert merge([(1, 2), (3, 4)]) == [(1, 2), (3, 4)]
    assert merge([]) == []
    assert merge([(2, 2)]) == [(2, 2)]
    assert merge([(1, 10), (2, 3), (4, 5)]) == [(1, 10)]


def test_input_unchanged():
    given = [(4, 6), (1, 5)]
    merge(given)
    assert given == [(4, 6), (1, 5)]


def test_reversed_refused():
    with pytest.raises(ValueError):
        merge([(3, 1)])


def test_total_length():
    assert total_length([(1, 3), (2, 6), (10, 11)]) == 6


def test_against_brute_force():
    rng = random.Random(5)
    for _ in range(200):
        given = [(a, a + rng.randint(0, 5)) for a in (rng.randint(0, 30) for _ in range(rng.randint(0, 8)))]
        covered = {x for a, b in given for x in range(a, b + 1)}
        result = merge(given)
        assert {x for a, b in result for x in range(a, b + 1)} == covered
        assert all(result[i][1] < result[i + 1][0] for i in range(len(result) - 1))
