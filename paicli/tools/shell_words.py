"""How bash would split a command line, as far as the command guard needs to know.

`split_heredocs` takes here-document bodies out first (they are data, but an unquoted one still runs
its `$(...)`); `extract_substitutions` lifts `$(...)`, backticks and `<(...)`/`>(...)` out of the text
(they are code of their own) and leaves placeholder words behind; `pipelines` splits the rest into
pipelines of simple commands with quotes removed (`r"m"` is `rm`) and redirections set aside.
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


@dataclass
class HereDoc:
    body: str
    expands: bool  # unquoted delimiter: bash runs the `$(...)` and backticks inside the body


_CONTINUATION = re.compile(r"(?<!\\)((?:\\\\)*)\\\n")


def join_continued_lines(text: str) -> str:
    """Remove backslash-newline pairs, as bash does before it reads words: `r\\<newline>m` is `rm`.

    An escaped backslash before a newline (`\\\\<newline>`) is kept: that newline ends the command.
    Inside single quotes bash keeps the pair; removing it there too only changes data, never hides code.
    """
    return _CONTINUATION.sub(r"\1", text)


_HEREDOC_DELIMITER = re.compile(r"[ \t]*((?:[^\s;&|<>()'\"\\]|'[^']*'|\"[^\"]*\"|\\.)+)")


def split_heredocs(text: str) -> tuple[str, list[HereDoc]]:
    """The text with here-document bodies removed (each operator and delimiter stays), and the bodies.

    A body's quotes mean nothing to bash, so leaving it in would let `don't` open a quote that hides
    the lines after it. A body without its closing delimiter runs to the end, as in bash.
    """
    out: list[str] = []
    docs: list[HereDoc] = []
    pending: list[tuple[str, bool, bool]] = []  # (delimiter, strip leading tabs, expands)
    i, n = 0, len(text)
    quote: str | None = None
    while i < n:
        char = text[i]
        if quote == "'":
            quote = None if char == "'" else quote
        elif char == "\\" and i + 1 < n:
            out.append(text[i : i + 2])
            i += 2
            continue
        elif char in "'\"" and quote in (None, char):
            quote = None if quote else char
        elif quote is None and text.startswith("<<<", i):  # a here-string: its word stays in the text
            out.append("<<<")
            i += 3
            continue
        elif quote is None and text.startswith("<<", i):
            strip_tabs = text.startswith("<<-", i)
            start = i + (3 if strip_tabs else 2)
            match = _HEREDOC_DELIMITER.match(text, start)
            if match:
                word = match.group(1)
                expands = not any(c in word for c in "'\"\\")
                pending.append((re.sub(r"['\"\\]", "", word), strip_tabs, expands))
                out.append(text[i : match.end()])
                i = match.end()
                continue
        elif char == "\n" and quote is None and pending:
            out.append(char)
            i = _take_bodies(text, i + 1, pending, docs)
            pending = []
            continue
        out.append(char)
        i += 1
    if pending:  # the operator was on the last line: the bodies are empty
        docs.extend(HereDoc("", expands) for _, _, expands in pending)
    return "".join(out), docs


def _take_bodies(text: str, i: int, pending: list[tuple[str, bool, bool]], docs: list[HereDoc]) -> int:
    """Consume the bodies that follow a line with here-document operators; return where the text goes on."""
    for delimiter, strip_tabs, expands in pending:
        lines: list[str] = []
        while i < len(text):
            end = text.find("\n", i)
            end = len(text) if end < 0 else end
            line = text[i:end]
            i = end + 1
            if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                break
            lines.append(line)
        docs.append(HereDoc("\n".join(lines), expands))
    return min(i, len(text))


def extract_substitutions(text: str, *, quotes: bool = True) -> tuple[str, list[str]]:
    """Replace each top-level `$(...)`, backtick and `<(...)`/`>(...)` with a placeholder word.

    Returns the flattened text and the bodies, in order. Single-quoted text is left alone (bash does
    not substitute there); double-quoted text is searched, as bash does. `quotes=False` treats quote
    characters as ordinary text, as bash does in the body of an unquoted here-document.
    """
    out: list[str] = []
    subs: list[str] = []
    i, n = 0, len(text)
    quote: str | None = None
    while i < n:
        char = text[i]
        if not quotes and char in "'\"":
            out.append(char)
            i += 1
        elif quote == "'":
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
