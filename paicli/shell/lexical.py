"""Bash's character-level rules that the grammar leaves to its user: quote removal and backslashes.

Every function here works on text the grammar has already delimited (one word, the inside of one
double-quoted string, one here-document body, one backtick substitution); none of them decides where a
token starts or ends.
"""

from __future__ import annotations

import re

from paicli.shell.syntax import Literal

# Characters a backslash escapes inside double quotes (and, without `"`, in a here-document body).
_DOUBLE_QUOTE_ESCAPE = re.compile(r'\\([$`"\\\n])')
_HEREDOC_ESCAPE = re.compile(r"\\([$`\\\n])")
_ESCAPE_PAIR = re.compile(r"\\.?", re.DOTALL)  # a trailing backslash escapes nothing, and is left out too
_BACKTICK_OR_ESCAPE = re.compile(r"\\.?|`", re.DOTALL)
# An expansion the grammar should have found in quoted text: `$(`, `${`, `$NAME`, `$1`, `$@`, ...
_MISSED_EXPANSION = re.compile(r"\$(?:[({A-Za-z_0-9@*#?$!-])")


def unquote_word(text: str) -> list[Literal]:
    """An unquoted word's text as literals: `\\x` is a quoted `x`, backslash-newline disappears."""
    parts: list[Literal] = []
    plain: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text):
            if plain:
                parts.append(Literal("".join(plain), quoted=False))
                plain = []
            if text[i + 1] != "\n":
                parts.append(Literal(text[i + 1], quoted=True))
            i += 2
            continue
        plain.append(char)
        i += 1
    if plain:
        parts.append(Literal("".join(plain), quoted=False))
    return parts


def unescape_quoted(text: str, *, heredoc: bool = False) -> str:
    """Double-quoted text (or an unquoted here-document body) with bash's backslash rules applied."""
    pattern = _HEREDOC_ESCAPE if heredoc else _DOUBLE_QUOTE_ESCAPE
    return pattern.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), text)


def unescaped_spans(text: str) -> list[tuple[int, int]]:
    """The spans of `text` outside backslash escapes (`\\x` pairs are left out)."""
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _ESCAPE_PAIR.finditer(text):
        spans.append((start, match.start()))
        start = match.end()
    spans.append((start, len(text)))
    return [(a, b) for a, b in spans if b > a]


def missed_expansion(text: str) -> bool:
    """Whether quoted text still holds an unescaped `$(`, `${`, `$NAME` or backtick: code the grammar missed."""
    return any("`" in text[a:b] or _MISSED_EXPANSION.search(text[a:b]) for a, b in unescaped_spans(text))


def backtick_spans(text: str) -> list[tuple[int, int]] | None:
    """The (start, end) of each backtick pair's inside in here-document text; None if one is left open."""
    spans: list[tuple[int, int]] = []
    opened: int | None = None
    for match in _BACKTICK_OR_ESCAPE.finditer(text):
        if match.group() != "`":
            continue
        if opened is None:
            opened = match.end()
        else:
            spans.append((opened, match.start()))
            opened = None
    return None if opened is not None else spans


def unescape_backticks(text: str, *, in_double_quotes: bool) -> str:
    """The code inside backticks as bash runs it: `\\$`, `` \\` `` and `\\\\` lose their backslash first
    (`\\"` too inside double quotes), so `` `echo \\`rm\\`` `` runs `rm`."""
    escapes = '$`\\"' if in_double_quotes else "$`\\"
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text) and text[i + 1] in escapes:
            out.append(text[i + 1])
            i += 2
            continue
        out.append(char)
        i += 1
    return "".join(out)


def continuation_points(data: bytes) -> list[int]:
    """Offsets of every backslash-newline whose backslash is not itself escaped."""
    points = []
    for match in re.finditer(rb"(\\+)\n", data):
        if len(match.group(1)) % 2:
            points.append(match.end() - 2)
    return points


def heredoc_delimiter(raw: str) -> str:
    """The word that ends a here-document, quotes removed (`"E"`, `'E'`, `\\E` and `E` all end at `E`)."""
    out: list[str] = []
    quote: str | None = None
    i = 0
    while i < len(raw):
        char = raw[i]
        if quote == "'":
            quote = None if char == "'" else quote
            if quote:
                out.append(char)
        elif quote == '"' and char == '"':
            quote = None
        elif char == "\\" and i + 1 < len(raw) and (quote is None or raw[i + 1] in '$`"\\'):
            out.append(raw[i + 1])
            i += 1
        elif quote is None and char in "'\"":
            quote = char
        else:
            out.append(char)
        i += 1
    return "".join(out)
