"""Read-only JSON values: tool schemas built once and shared by every request without a copy each time."""

from __future__ import annotations

import copy
from typing import Any, NoReturn


def _refuse(*args: object, **kwargs: object) -> NoReturn:
    raise TypeError("a shared tool schema cannot be changed: change a copy (copy.deepcopy) instead")


class FrozenDict(dict[str, Any]):
    """A dict that refuses every change. It is still a dict (json.dumps and the model client take it as
    one); a copy of it (copy.copy, copy.deepcopy, dict(...)) is an ordinary, changeable dict."""

    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __copy__(self) -> dict[str, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        return {key: copy.deepcopy(value, memo) for key, value in self.items()}

    def __reduce__(self) -> tuple[type[dict[str, Any]], tuple[dict[str, Any]]]:
        return dict, (dict(self),)


class FrozenList(list[Any]):
    """A list that refuses every change; copied, an ordinary list (see FrozenDict)."""

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = extend = insert = pop = remove = clear = sort = reverse = _refuse

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return [copy.deepcopy(item, memo) for item in self]

    def __reduce__(self) -> tuple[type[list[Any]], tuple[list[Any]]]:
        return list, (list(self),)


def frozen(value: Any) -> Any:
    """`value` (JSON: dicts, lists, scalars) with every dict a FrozenDict and every list a FrozenList."""
    if isinstance(value, dict):
        return FrozenDict({key: frozen(item) for key, item in value.items()})
    if isinstance(value, list | tuple):
        return FrozenList(frozen(item) for item in value)
    return value
