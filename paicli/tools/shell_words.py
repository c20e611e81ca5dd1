"""How bash would split a command line, as far as the command guard needs to know.

`extract_substitutions` lifts `$(...)`, backticks and `<(...)`/`>(...)` out of the text (they are
code of their own) and leaves placeholder words behind; `pipelines` splits the rest into pipelines
of simple commands with quotes removed (`r"m"` is `rm`) and redirections set aside.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field

OPERATOR_CHARS = "();<>|&\n"
PLACEHOLDER = re.compile(r"__paicli_sub_(\d+)__")


@dataclass
class SimpleCommand:
    words: list[str] = field(default_factory=list)
    redirects: list[tuple[str, str]] = field(default_factory=list)  # (operator, target)


Pipeline = list[SimpleCommand]


def extract_substitutions(text: str) -> tuple[str, list[str]]:
    """Replace each top-level `$(...)`, backtick and `<(...)`/`>(...)` with a placeholder word.

    Returns the flattened text and the bodies, in order. Single-quoted text is left alone (bash does
    not substitute there); double-quoted text is searched, as bash does.
    """
    out: list[str] = []
    subs: list[str] = []
    i, n = 0, len(text)
    quote: str | None = None
    while i < n:
        char = text[i]
        if quote == "'":
            out.append(char)
            quote = None if char == "'" else quote
            i += 1
        elif char == "\\" and i + 1 < n:
            out.append(text[i : i + 2])
            i += 2
        elif char == "'" and quote is None:
            quote = "'"
            out.append(char)
            i += 1
        elif char == '"':
            quote = None if quote else '"'
            out.append(char)
            i += 1
        elif text.startswith("$(", i) or (quote is None and text[i : i + 2] in ("<(", ">(")):
            end = _matching_paren(text, i + 2)
            subs.append(text[i + 2 : end])
            word = f"__paicli_sub_{len(subs) - 1}__"
            out.append(word if quote else f" {word} ")
            i = end + 1
        elif char == "`":
            end = _closing_backtick(text, i + 1)
            subs.append(text[i + 1 : end])
            out.append(f"__paicli_sub_{len(subs) - 1}__")
            i = end + 1
        else:
            out.append(char)
            i += 1
    return "".join(out), subs


def tokenize(text: str) -> list[str]:
    """Words and operator runs, quotes removed; `#` is not a comment. Raises ValueError on open quotes."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=OPERATOR_CHARS)
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    lexer.commenters = ""
    return list(lexer)


def pipelines(flat: str) -> Iterator[Pipeline]:
    """The pipelines of a flattened command line (see `extract_substitutions`)."""
    try:
        chunks = [tokenize(flat)]
    except ValueError:
        # Unbalanced quotes: bash runs the lines before the broken one, so split those that can be.
        chunks = []
        for line in flat.splitlines():
            try:
                chunks.append(tokenize(line))
            except ValueError:
                continue
    for tokens in chunks:
        yield from _split(tokens)


def placeholders(text: str) -> list[int]:
    return [int(m.group(1)) for m in PLACEHOLDER.finditer(text)]


def substitution(subs: list[str], index: int) -> str:
    """The body of placeholder `index`; "" for a placeholder-looking word the user typed."""
    return subs[index] if 0 <= index < len(subs) else ""


def restore(text: str, subs: list[str]) -> str:
    """`text` with its placeholders turned back into `$(...)`, for checking it as code again."""
    return PLACEHOLDER.sub(lambda m: f"$({substitution(subs, int(m.group(1)))})", text)


def _split(tokens: list[str]) -> Iterator[Pipeline]:
    pipeline: Pipeline = []
    command = SimpleCommand()
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if not _is_operator(token):
            command.words.append(token)
        elif token.replace("\n", "") in ("|", "|&"):  # a newline may follow a pipe
            pipeline.append(command)
            command = SimpleCommand()
        elif ("<" in token or ">" in token) and not any(c in token for c in "()"):
            target = tokens[i + 1] if i + 1 < len(tokens) else ""
            command.redirects.append((token, target))
            i += 1
        else:
            pipeline.append(command)
            yield pipeline
            pipeline, command = [], SimpleCommand()
        i += 1
    pipeline.append(command)
    yield pipeline


def _is_operator(token: str) -> bool:
    return bool(token) and all(c in OPERATOR_CHARS for c in token)


def _matching_paren(text: str, start: int) -> int:
    """Index of the `)` closing a group whose body starts at `start` (len(text) when unclosed)."""
    depth, i, quote = 1, start, None
    while i < len(text):
        char = text[i]
        if quote:
            if char == "\\" and quote == '"':
                i += 1
            elif char == quote:
                quote = None
        elif char == "\\":
            i += 1
        elif char in "'\"":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return len(text)


def _closing_backtick(text: str, start: int) -> int:
    i = start
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == "`":
            return i
        i += 1
    return len(text)
