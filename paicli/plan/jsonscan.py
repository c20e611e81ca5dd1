"""Finding the JSON values in a model reply: lenient about where they sit, bounded in time and depth.

A reply is untrusted text. Everything here runs in time linear in its length, never recurses deeper than
`MAX_DEPTH` levels of `{`/`[`, and never hands `json_repair` (pure Python, ~5 µs a character) more than
`REPAIR_SPAN` characters at once or `REPAIR_BUDGET` characters per reply. Values are loaded lazily, so a
caller that has seen enough (two different plans) stops without loading the rest.

Where the JSON may sit: in a ```json (or unlabelled) code fence, or in prose; fences labelled with another
language (```bash) are skipped; `<think>…</think>` blocks are dropped first (reasoning models put them
before the answer). Any `{`, `[` or string left open means the reply looks cut off: `PlanError`, never a
shorter value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from paicli.common.errors import PlanError
from paicli.common.sanitize import well_formed_json

MAX_DEPTH = 64  # levels of { and [: a plan needs about six
MAX_VALUES = 1_000  # top-level JSON values looked at in one reply
REPAIR_SPAN = 64_000  # characters of one value json_repair may work on (about 0.3 s)
REPAIR_BUDGET = 200_000  # characters json_repair may work on for one reply in total

JSON_FENCE_LABELS = {"", "json", "json5", "jsonc", "js", "javascript"}
_STRUCTURE = re.compile(r"[{}\[\]\"'/]")
_STRING_END = {'"': re.compile(r'["\\]'), "'": re.compile(r"['\\]")}
_OPENER = re.compile(r"[{\[]")
_THINK_OPEN = re.compile(r"<think(?:ing)?>")
_FENCE = re.compile(r"^ {0,3}```(?P<info>.*)$")
FENCE_LABEL = re.compile(r"[\w+.-]*")

CUT_OFF = (
    "the JSON in the reply is unterminated (an unclosed {, [ or string), so the reply looks cut off; "
    "reply with the complete plan as one JSON object"
)


class Unreadable:
    """A span that is not JSON even leniently; `reason` says why (for the error when nothing else fits)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


def too_deep(limit: int = MAX_DEPTH) -> PlanError:
    return PlanError(f"the JSON is nested too deeply (more than {limit} levels of {{ and [); reply with a flat plan")


def json_values(text: str) -> Iterator[Any | Unreadable]:
    """Every top-level JSON value of a reply, in order, each loaded leniently when it is first asked for.

    Raises PlanError (lazily, when the scan reaches it) for an unterminated or too deeply nested value,
    and for more than `MAX_VALUES` values.
    """
    budget = [REPAIR_BUDGET]
    count = 0
    for segment in segments(strip_thinking(text)):
        for span in spans(segment):
            count += 1
            if count > MAX_VALUES:
                raise PlanError(
                    f"the reply holds more than {MAX_VALUES:,} separate JSON values; reply with only the plan"
                )
            value = load(span, budget)
            if value is not None:
                yield value


def strip_thinking(text: str) -> str:
    """The text without `<think>…</think>` (or `<thinking>…</thinking>`) blocks, in one pass.

    An opening tag without a closing one is left as it is (as the non-greedy regex this replaces did,
    but without rescanning the rest of the text for every unclosed tag).
    """
    parts: list[str] = []
    position = 0
    while (opening := _THINK_OPEN.search(text, position)) is not None:
        close = _first_close(text, opening.end())
        if close is None:
            break
        parts.append(text[position : opening.start()])
        position = close
    parts.append(text[position:])
    return "".join(parts)


def _first_close(text: str, start: int) -> int | None:
    """End of the first `</think>` or `</thinking>` after `start`, or None."""
    found = [at for at in (text.find("</think>", start), text.find("</thinking>", start)) if at >= 0]
    if not found:
        return None
    at = min(found)
    return at + (len("</thinking>") if text.startswith("</thinking>", at) else len("</think>"))


def segments(text: str) -> list[str]:
    """The parts of the text to scan: each JSON-ish fence's content and the prose around fences.

    A fence is a line starting with ``` (markdown's rule), so backticks inside a JSON string do not
    count. An unclosed fence runs to the end of the text. Fences labelled with another language are
    skipped. `` ```{...}``` `` on one line is a fence too.
    """
    found: list[str] = []
    current: list[str] = []
    label: str | None = None  # None: outside a fence
    for line in text.split("\n"):
        fence = _FENCE.match(line)
        if fence is None:
            current.append(line)
        elif label is not None:
            if fence.group("info").strip():  # ``` followed by text inside a block: content
                current.append(line)
                continue
            if label in JSON_FENCE_LABELS:  # the closing fence
                found.append("\n".join(current))
            current = []
            label = None
        else:
            found.append("\n".join(current))
            current = []
            info = fence.group("info")
            if FENCE_LABEL.fullmatch(info.strip()):  # strip first: `\s*x*\s*` backtracks quadratically
                label = info.strip().lower()
            elif info.rstrip().endswith("```"):  # a one-line fenced block
                found.append(info.rstrip()[:-3])
            else:  # no label: the content starts on the fence line
                label = ""
                current.append(info)
    if label is None or label in JSON_FENCE_LABELS:
        found.append("\n".join(current))
    return found


def spans(segment: str) -> Iterator[str]:
    """Top-level {…} / […] spans of a segment, lazily; PlanError for one left open or nested too deeply."""
    position = 0
    while (opener := _OPENER.search(segment, position)) is not None:
        end = span_end(segment, opener.start())
        if end < 0:
            raise PlanError(CUT_OFF)
        yield segment[opener.start() : end]
        position = end


def span_end(text: str, start: int, max_depth: int = MAX_DEPTH) -> int:
    """Index just past the bracket closing the one at `start`; -1 if the text ends first.

    Strings in double or single quotes and // or /* */ comments are skipped. PlanError when the
    brackets nest deeper than `max_depth`.
    """
    depth = 0
    position = start
    while (match := _STRUCTURE.search(text, position)) is not None:
        char, at = match.group(), match.start()
        position = at + 1
        if char in "{[":
            depth += 1
            if depth > max_depth:
                raise too_deep(max_depth)
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return position
        elif char in "\"'":
            position = _string_end(text, at + 1, char)
            if position < 0:
                return -1
        elif text.startswith("//", at):
            newline = text.find("\n", at)
            position = len(text) if newline < 0 else newline + 1
        elif text.startswith("/*", at):
            close = text.find("*/", at + 2)
            if close < 0:
                return -1
            position = close + 2
    return -1


def _string_end(text: str, position: int, quote: str) -> int:
    pattern = _STRING_END[quote]
    while (match := pattern.search(text, position)) is not None:
        if match.group() == "\\":
            position = match.start() + 2
            continue
        return match.start() + 1
    return -1


def load(span: str, budget: list[int]) -> Any | Unreadable | None:
    """The span as JSON: strictly, else repaired when it is small enough and the budget allows.

    None when it is not JSON at all (prose in brackets, an empty repair); `Unreadable` when it might have
    been but was too long to repair. `budget[0]` is what is left of the reply's repair budget.
    """
    try:
        return well_formed_json(json.loads(span, strict=False))
    except RecursionError:  # the span scan bounds the depth; this is a second line of defence
        raise too_deep() from None
    except ValueError as error:  # a JSONDecodeError, or an integer too long to convert
        strict_error = _decode_error(error)
    if len(span) > REPAIR_SPAN or len(span) > budget[0]:
        return Unreadable(
            f"the JSON in the reply is not valid ({strict_error}) and, at {len(span):,} characters, too long "
            "to be repaired; reply with strict JSON"
        )
    budget[0] -= len(span)
    import json_repair  # 30 ms or more to import; most replies are strict JSON and never need it

    try:
        value = json_repair.loads(span)
    except Exception:  # json_repair has no documented error type (RecursionError included): "not JSON"
        return None
    return None if value == "" else well_formed_json(value)


def _decode_error(error: ValueError) -> str:
    if isinstance(error, json.JSONDecodeError):
        return f"{error.msg} at line {error.lineno} column {error.colno}"
    return str(error).splitlines()[0] if str(error) else type(error).__name__
