import copy
import random

from dictdiff import diff, patch


def test_example():
    old = {"name": "svc", "db": {"host": "a", "port": 1}, "gone": True}
    new = {"name": "svc", "db": {"host": "b", "port": 1, "user": "u"}, "extra": [1]}
    assert diff(old, new) == [
        ("change", "db.host", "a", "b"),
        ("add", "db.user", None, "u"),
        ("add", "extra", None, [1]),
        ("remove", "gone", True, None),
    ]


def test_type_change_and_dotted_keys():
    assert diff({"a": {"x": 1}}, {"a": 5}) == [("change", "a", {"x": 1}, 5)]
    assert diff({"config": {"a.b": {"x": 1}}}, {"config": {"a.b": {"x": 2}}}) == [
        ("change", 'config["a.b"].x', 1, 2)
    ]


def _random_tree(rng, depth=0):
    tree = {}
    for _ in range(rng.randint(0, 4)):
        key = rng.choice(["a", "b", "c", "d.e", "f"])
        tree[key] = _random_tree(rng, depth + 1) if depth < 2 and rng.random() < 0.4 else rng.randint(0, 3)
    return tree


def test_patch_inverts_diff():
    rng = random.Random(3)
    for _ in range(300):
        a, b = _random_tree(rng), _random_tree(rng)
        before = copy.deepcopy(a)
        assert patch(a, diff(a, b)) == b
        assert a == before
    assert diff(b, b) == []
