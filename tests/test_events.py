"""Events are handled exhaustively: `AnyEvent` is every event type there is, every sink takes it, and each
sink that renders events dispatches with one `match event:` that names every event type and ends in
`case _: assert_never(event)`, so that `mypy --strict` names the sink a new event type is missing from.
mypy proves each match complete; these tests keep the shape its proof relies on (an event type left out of
`AnyEvent`, or a `case _` that swallows, would hide the gap from it)."""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import pytest

from paicli import headless
from paicli.common.events import AnyEvent, Event
from paicli.ui.chat.render import ChatRenderer
from paicli.ui.chat.transcript import Transcript
from paicli.ui.commands.init_command import WithoutText
from paicli.ui.plan.live_view import LivePlanView

ROOT = Path(__file__).resolve().parent.parent / "paicli"
MEMBERS: tuple[type[Event], ...] = get_args(get_args(AnyEvent)[0])  # AnyEvent: Annotated[A | B | …, Field(…)]
# The sinks that render events, and the filter of /init's turn (a new event type is passed on or held back
# by a decision there too).
RENDERING: list[Callable[..., Any]] = [
    ChatRenderer.emit,
    LivePlanView.emit,
    Transcript.emit,
    WithoutText.emit,
    headless._progress_line,
]


def subclasses(cls: type[Event]) -> Iterator[type[Event]]:
    for sub in cls.__subclasses__():
        yield sub
        yield from subclasses(sub)


def is_concrete(cls: type[Event]) -> bool:
    """An event with its own `event` name (not `Event`, nor a helper base such as one for `changes`)."""
    return get_origin(cls.model_fields["event"].annotation) is Literal


def test_any_event_is_every_event_type() -> None:
    concrete = {cls.__name__ for cls in subclasses(Event) if cls.__module__.startswith("paicli.") and is_concrete(cls)}
    assert concrete == {cls.__name__ for cls in MEMBERS}


def the_match(function: Callable[..., Any]) -> ast.Match:
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    found = [node for node in ast.walk(tree) if isinstance(node, ast.Match) and ast.unparse(node.subject) == "event"]
    assert len(found) == 1, f"{function.__qualname__} dispatches with one `match event:`"
    return found[0]


def named(case: ast.match_case) -> set[str]:
    """The event types a case's pattern names (`case A() | B(ok=False):` names A and B)."""
    classes = [node.cls for node in ast.walk(case.pattern) if isinstance(node, ast.MatchClass)]
    return {cls.id for cls in classes if isinstance(cls, ast.Name)}


@pytest.mark.parametrize("sink", RENDERING, ids=lambda sink: sink.__qualname__)
def test_a_rendering_sink_names_every_event_type_and_ends_in_assert_never(sink: Callable[..., Any]) -> None:
    *cases, last = the_match(sink).cases
    assert {name for case in cases if case.guard is None for name in named(case)} == {c.__name__ for c in MEMBERS}
    assert ast.unparse(last.pattern) == "_" and last.guard is None
    assert [ast.unparse(statement) for statement in last.body] == ["assert_never(event)"]
    assert inspect.signature(sink).parameters["event"].annotation in ("AnyEvent", AnyEvent)


def test_every_sink_takes_any_event() -> None:
    """Also those that only pass events on (a fan-out, a filter, a recorder, a null sink)."""
    wrong = []
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == "emit":
                annotations = [ast.unparse(arg.annotation) if arg.annotation else "" for arg in node.args.args[1:]]
                if annotations != ["AnyEvent"]:
                    wrong.append(f"{path.relative_to(ROOT.parent)}:{node.lineno} takes {annotations}")
    assert wrong == []
