"""grep_code's one regex syntax, RE2's (https://github.com/google/re2/wiki/Syntax), and the same pattern
written for ripgrep.

RE2 runs in linear time (no backtracking: `(a|aa)+$` on a long line returns at once), has no
backreferences and no lookaround; a pattern using them is refused with a message that says so. Patterns
match within one line (`never_nl`: even `\\s` or `[^a]` never match a line break), as ripgrep's do.

For ripgrep (Rust's regex crate, the same syntax for everything RE2 accepts here), the few places where the
two differ are rewritten: RE2's `\\w \\d \\s \\b` are ASCII, Rust's Unicode, so they become explicit ASCII
classes; `\\Q...\\E` (RE2 only) becomes escaped literals. Whatever ripgrep still refuses is searched in
process instead (paicli/tools/grep_search.py), so the results never depend on which engine ran.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import re2

SYNTAX_NOTE = "grep_code uses RE2 syntax: no backreferences, no lookahead or lookbehind"
_UNSUPPORTED = (
    (re.compile(r"\(\?<?[=!]"), "lookahead and lookbehind (`(?=`, `(?!`, `(?<=`, `(?<!`) are not supported"),
    (re.compile(r"\\[1-9]|\(\?P=|\\k<"), "backreferences (`\\1`, `(?P=name)`) are not supported"),
)
_ASCII_CLASSES = {"w": "0-9A-Za-z_", "d": "0-9", "s": "\\t\\n\\f\\r "}
_RUST_META = set("\\.+*?()|[]{}^$#&-~")


class PatternError(ValueError):
    """A pattern grep_code cannot search for; the message is for the model."""


@dataclass(frozen=True)
class LinePattern:
    """A compiled pattern: `first` finds whether a file has a match at all, `lines` matches one whole
    matching line at a time (so counting the lines of a file is one pass)."""

    source: str
    first: re2._Regexp[bytes]
    lines: re2._Regexp[bytes]


def compile_pattern(pattern: str) -> LinePattern:
    """The pattern compiled by RE2, or PatternError with a message naming the syntax."""
    import re2

    for finder, message in _UNSUPPORTED:
        if finder.search(pattern):
            raise PatternError(f"invalid regular expression {pattern!r}: {message}; {SYNTAX_NOTE}")
    if "\n" in pattern or "\\n" in pattern.replace("\\\\", ""):
        raise PatternError(f"invalid regular expression {pattern!r}: a pattern matches within one line")
    options = re2.Options()
    options.log_errors = False  # RE2 would write each error to stderr, under the terminal UI
    options.never_nl = True
    try:
        first = re2.compile(f"(?m)(?:{pattern})".encode(), options)
        lines = re2.compile(f"(?m)^.*?(?:{pattern}).*$".encode(), options)
    except re2.error as error:
        detail = error.args[0].decode(errors="replace") if error.args and isinstance(error.args[0], bytes) else error
        raise PatternError(f"invalid regular expression {pattern!r}: {detail}; {SYNTAX_NOTE}") from None
    return LinePattern(pattern, first, lines)


def for_ripgrep(pattern: str) -> str:
    """`pattern` (valid RE2) as Rust's regex crate reads it the same way."""
    out: list[str] = []
    in_class = False
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            escaped = pattern[i + 1]
            i += 2
            if escaped == "Q":
                end = pattern.find("\\E", i)
                literal = pattern[i:] if end < 0 else pattern[i:end]
                out.append("".join("\\" + c if c in _RUST_META else c for c in literal))
                i = len(pattern) if end < 0 else end + 2
            elif escaped.lower() in _ASCII_CLASSES:
                ascii_class = _ASCII_CLASSES[escaped.lower()]
                negated = escaped.isupper()
                if in_class and not negated:
                    out.append(ascii_class)
                else:
                    out.append(f"[{'^' if negated else ''}{ascii_class}]")
            elif escaped in "bB" and not in_class:
                out.append(f"(?-u:\\{escaped})")
            else:
                out.append("\\" + escaped)
            continue
        if char == "[" and not in_class:
            in_class = True
            out.append(char)
            i += 1
            if pattern.startswith("^", i):
                out.append("^")
                i += 1
            if pattern.startswith("]", i):  # a leading `]` is a literal
                out.append("\\]")
                i += 1
            continue
        if in_class and char == "[" and pattern.startswith("[:", i):
            end = pattern.find(":]", i + 2)
            if end >= 0:
                out.append(pattern[i : end + 2])
                i = end + 2
                continue
        if in_class and char == "]":
            in_class = False
        elif in_class and char in "&~-" and pattern[i : i + 2] in ("&&", "~~", "--"):
            out.append("\\")  # Rust reads these pairs as set operations inside a class; RE2 as literals
        out.append(char)
        i += 1
    return "".join(out)
