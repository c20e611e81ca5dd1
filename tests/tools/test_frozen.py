"""Read-only JSON values (paicli/tools/frozen.py): every way to change one is refused, and it still
serialises, copies and pickles as plain JSON."""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

import pytest

from paicli.tools.frozen import FrozenDict, FrozenList, frozen

SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {"name": "read_file", "parameters": {"required": ["path"], "properties": {"path": {"type": "string"}}}},
}


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.__setitem__("type", "x"),
        lambda d: d.__delitem__("type"),
        lambda d: d.update(type="x"),
        lambda d: d.pop("type"),
        lambda d: d.popitem(),
        lambda d: d.setdefault("new", 1),
        lambda d: d.clear(),
        lambda d: d.__ior__({"type": "x"}),
        lambda d: d["function"].__setitem__("name", "x"),
        lambda d: d["function"]["parameters"]["properties"]["path"].update(type="int"),
        lambda d: d["function"]["parameters"]["required"].append("x"),
        lambda d: d["function"]["parameters"]["required"].__setitem__(0, "x"),
        lambda d: d["function"]["parameters"]["required"].__iadd__(["x"]),
        lambda d: d["function"]["parameters"]["required"].sort(),
        lambda d: d["function"]["parameters"]["required"].clear(),
    ],
)
def test_every_change_is_refused(change: Any) -> None:
    value = frozen(SCHEMA)
    with pytest.raises(TypeError, match="cannot be changed"):
        change(value)
    assert json.dumps(value) == json.dumps(SCHEMA)


def test_it_equals_the_value_it_froze_and_serialises_alike() -> None:
    value = frozen(SCHEMA)
    assert value == SCHEMA and isinstance(value["function"]["parameters"]["required"], FrozenList)
    assert json.dumps(value) == json.dumps(SCHEMA)
    assert isinstance(value, dict) and isinstance(value, FrozenDict)


def test_copies_and_pickles_are_plain_changeable_json() -> None:
    value = frozen(SCHEMA)
    for other in (copy.deepcopy(value), pickle.loads(pickle.dumps(value))):
        assert type(other) is dict and json.dumps(other) == json.dumps(SCHEMA)
        other["type"] = "changed"
    shallow = copy.copy(value)
    assert type(shallow) is dict
    shallow["type"] = "changed"
    assert value["type"] == "function"
    required = copy.deepcopy(value["function"]["parameters"]["required"])
    assert type(required) is list
    required.append("x")
