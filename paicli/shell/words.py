"""Words from the grammar's nodes: quote removal, expansions, substitutions, here-document bodies.

`WordReader` turns one word-like node into a `Word` (and a here-document into a `HereDoc`). It calls
back into the statement builder for the code a substitution runs, and reports what it cannot read.
"""

from __future__ import annotations

import re
from typing import Protocol

from tree_sitter import Node

from paicli.shell.lexical import (
    backtick_spans,
    missed_expansion,
    unescape_backticks,
    unescape_quoted,
    unescaped_spans,
    unquote_word,
)
from paicli.shell.syntax import (
    Arithmetic,
    Expansion,
    HereDoc,
    Literal,
    Opaque,
    Part,
    Script,
    Substitution,
    Word,
)

# Node kinds whose text is a literal as it stands (quote removal aside).
_LITERAL_KINDS = {
    "word",
    "number",
    "test_operator",
    "extglob_pattern",
    "regex",
    "variable_name",
    "special_variable_name",
    "brace_expression",
    "file_descriptor",
}
WORD_KINDS = _LITERAL_KINDS | {
    "string",
    "raw_string",
    "concatenation",
    "simple_expansion",
    "expansion",
    "command_substitution",
    "process_substitution",
    "arithmetic_expansion",
    "ansi_c_string",
    "translated_string",
}
# `${NAME<op>word}` operators that only choose, trim or replace text (no arithmetic, no indirection).
# Code a word or an expansion operand can hold: substitutions of every kind and `$[` arithmetic.
_SUBSTITUTION = re.compile(r"`|\$[(\[]|[<>]\(")
_ARITHMETIC_UNREADABLE = re.compile(r"['\"`\\]|\$[(\[]|[<>]\(")
_ARITHMETIC_OPENER = re.compile(r"^(?:\$\(\(|\$\[|\(\()")
_HIDDEN_IN_QUOTES = re.compile(r"\$[({\[A-Za-z_0-9@*#?$!-]")
_HIDDEN_UNQUOTED = re.compile(r"\$[({\[A-Za-z_0-9@*#?$!'\"-]|[<>]\(")
# Where a single quote is a quote again: the inside of a substitution or any command.
_OWN_QUOTES = {
    "command_substitution",
    "process_substitution",
    "command",
    "declaration_command",
    "unset_command",
    "variable_assignment",
    "test_command",
    "program",
}
_PLAIN_EXPANSION_OPERATORS = {
    ":-",
    "-",
    ":=",
    "=",
    ":+",
    "+",
    ":?",
    "?",
    "#",
    "##",
    "%",
    "%%",
    "/",
    "//",
    "/#",
    "/%",
    "^",
    "^^",
    ",",
    ",,",
}


class Host(Protocol):
    """What the word reader needs from the statement builder."""

    def text(self, node: Node) -> str: ...

    def slice(self, start: int, end: int) -> str: ...

    def unreadable(self, source: str, reason: str) -> None: ...

    def read(self, node: Node) -> None:
        """Note that `node`'s meaning was taken (see parse.py: a substitution or expansion never read fails)."""

    def statements_script(self, node: Node, start: int, end: int) -> Script: ...

    def subparse(self, code: str) -> Script: ...


class WordReader:
    def __init__(self, host: Host) -> None:
        self.host = host

    def word(self, node: Node) -> Word:
        return Word(self.host.text(node), tuple(self.parts(node, quoted=False)))

    def parts(self, node: Node, *, quoted: bool) -> list[Part]:
        kind = node.type
        source = self.host.text(node)
        self.host.read(node)
        if kind in _LITERAL_KINDS:
            if hidden_code(source, quoted=quoted):
                self.host.unreadable(source, f"the grammar reads {source!r} as plain text, where bash runs code")
            if quoted:
                return [Literal(source, quoted=True)]
            literals = unquote_word(source)
            if _splits(literals, kind):
                self.host.unreadable(source, f"the grammar reads {source!r} as one word, where bash splits it")
            return list(literals)
        if kind == "raw_string":
            if _quotes_are_text(node):
                self.host.unreadable(source, f"bash does not take the single quotes of {source} as quotes there")
            return [Literal(source[1:-1], quoted=True)]
        if kind == "string":
            return self._double_quoted(node)
        if kind == "concatenation":
            return [part for child in node.children for part in self.parts(child, quoted=quoted)]
        if kind == "simple_expansion":
            name = source[1:]
            return [Expansion(source, name if name.isidentifier() else None, quoted)]
        if kind == "expansion":
            return [self._expansion(node, source, quoted)]
        if kind in ("command_substitution", "process_substitution"):
            return [self._substitution(node, source, quoted)]
        if kind == "arithmetic_expansion":
            return [self.arithmetic(node)]
        if kind in ("ansi_c_string", "translated_string"):
            self.host.unreadable(source, "it uses $'...' or $\"...\" quoting, which paicli does not decode")
            return [Opaque(source)]
        self.host.unreadable(source, f"paicli cannot read this part of the command ({kind})")
        return [Opaque(source)]

    def arithmetic(self, node: Node) -> Arithmetic:
        """What `$((...))`, `$[...]`, `((...))` or a `for ((...))` head evaluates. Bash reads quotes there as
        text and expands `$(...)` and backticks even between single quotes: any quote, backslash or
        substitution makes it unreadable."""
        names: set[str] = set()
        scripts: list[Script] = []
        source = self.host.text(node)
        self.host.read(node)
        if _ARITHMETIC_UNREADABLE.search(_ARITHMETIC_OPENER.sub("", source, count=1)):
            self.host.unreadable(source, f"{source} holds quotes or substitutions, which bash reads its own way there")
        stack = list(node.children)
        while stack:
            child = stack.pop()
            self.host.read(child)
            if child.type in ("command_substitution", "process_substitution"):
                scripts.extend(self._substitution(child, self.host.text(child), True).scripts)
            elif child.type in ("variable_name", "word"):
                names.add(self.host.text(child))
            elif child.type in ("simple_expansion", "expansion"):
                names.add(self.host.text(child))
                stack.extend(child.children)
            elif child.type == "ERROR" or child.is_missing:
                self.host.unreadable(self.host.text(node), "its arithmetic does not parse")
            else:
                stack.extend(child.children)
        return Arithmetic(self.host.text(node), frozenset(names), tuple(scripts))

    def heredoc(self, start: Node, body: Node | None, strip_tabs: bool) -> HereDoc:
        delimiter = self.host.text(start)
        expands = not any(c in delimiter for c in "'\"\\")
        if body is None:
            return HereDoc("", expands)
        raw = self.host.text(body)
        if not expands:
            return HereDoc(_strip_tabs(raw) if strip_tabs else raw, expands=False)
        scripts: list[Script] = []
        text: list[str] = []
        dynamic = False
        cursor = body.start_byte
        for child in body.named_children:
            if child.type == "heredoc_content":
                continue
            text.append(self._heredoc_literal(cursor, child.start_byte, scripts))
            for part in self.parts(child, quoted=True):
                dynamic = True
                text.append(part.source if not isinstance(part, Literal) else part.text)
                scripts.extend(part.scripts if not isinstance(part, Literal) else ())
            cursor = child.end_byte
        text.append(self._heredoc_literal(cursor, body.end_byte, scripts))
        dynamic = dynamic or len(scripts) > 0
        joined = "".join(text)
        return HereDoc(_strip_tabs(joined) if strip_tabs else joined, True, tuple(scripts), dynamic)

    def _heredoc_literal(self, start: int, end: int, scripts: list[Script]) -> str:
        """Literal body text between two expansions. The grammar does not see backticks here: find them."""
        raw = self.host.slice(start, end)
        spans = backtick_spans(raw)
        if spans is None:
            self.host.unreadable(raw, "a backtick in a here-document is left open")
            return raw
        for a, b in spans:
            scripts.append(self.host.subparse(unescape_backticks(raw[a:b], in_double_quotes=False)))
        rest = "".join(raw[i:j] for i, j in _outside(spans, len(raw)))
        if missed_expansion(rest.replace("`", "")):
            self.host.unreadable(raw, "a here-document expands something paicli cannot place")
        return unescape_quoted(raw, heredoc=True)

    def _double_quoted(self, node: Node) -> list[Part]:
        parts: list[Part] = []
        children = node.children
        cursor = children[0].end_byte if children and children[0].type == '"' else node.start_byte
        end = children[-1].start_byte if len(children) > 1 and children[-1].type == '"' else node.end_byte
        if not (children and children[-1].type == '"' and not children[-1].is_missing):
            self.host.unreadable(self.host.text(node), "a double quote is left open")
        for child in node.named_children:
            if child.type == "string_content":
                continue
            parts.extend(self._quoted_literal(cursor, child.start_byte))
            parts.extend(self.parts(child, quoted=True))
            cursor = child.end_byte
        parts.extend(self._quoted_literal(cursor, end))
        return parts or [Literal("", quoted=True)]

    def _quoted_literal(self, start: int, end: int) -> list[Literal]:
        if end <= start:
            return []
        raw = self.host.slice(start, end)
        if missed_expansion(raw):
            self.host.unreadable(raw, "a double-quoted string expands something paicli cannot place")
        return [Literal(unescape_quoted(raw), quoted=True)]

    def _expansion(self, node: Node, source: str, quoted: bool) -> Expansion:
        """`${...}`: plain forms are values; indirection, subscripts, substrings and transformations
        evaluate text as arithmetic or prompts, which can run code held in a variable."""
        scripts: list[Script] = []
        open_ = any(c.is_missing or c.type == "ERROR" for c in node.children)
        holds_code = not open_ and bool(_SUBSTITUTION.search(source[2:]))
        if holds_code:  # reported first: the clearest reason, whatever the grammar made of the operand
            self.host.unreadable(source, f"{source} holds a substitution in its operand, which runs only when needed")
            # The grammar may have read it as text: give the denylist the code a generous reading finds there
            # (quotes are text inside double quotes, so they are dropped).
            scripts.append(self.host.subparse("echo " + source[2:-1].replace("'", " ")))
        names = [c for c in node.named_children if c.type in ("variable_name", "special_variable_name")]
        operators = [self.host.text(c) for c in node.children if not c.is_named and c.type not in ("${", "}")]
        for child in node.named_children:
            if child.type not in ("variable_name", "special_variable_name", "subscript"):
                scripts.extend(
                    s for p in self.parts(child, quoted=True) if not isinstance(p, Literal) for s in p.scripts
                )
        subscripts = [c for c in node.named_children if c.type == "subscript"]
        operands = [
            c for c in node.named_children if c.type not in ("variable_name", "special_variable_name", "subscript")
        ]
        if operators in ([], ["#"]) or (len(operators) == 1 and operators[0] in _PLAIN_EXPANSION_OPERATORS):
            plain = len(names) + len(subscripts) == 1
        else:  # only `${x:1:2}`, a substring at fixed offsets
            plain = set(operators) == {":"} and len(names) == 1 and all(c.type == "number" for c in operands)
        plain = plain and _numeric_subscripts(self.host, subscripts)
        if open_:
            self.host.unreadable(source, "an expansion is left open")
        elif not plain and not holds_code:
            self.host.unreadable(source, f"{source} evaluates text as arithmetic or code when it runs")
        name = self.host.text(names[0]) if plain and names and not operators and not subscripts else None
        return Expansion(source, name, quoted, tuple(scripts))

    def _substitution(self, node: Node, source: str, quoted: bool) -> Substitution:
        self.host.read(node)
        children = node.children
        opener = children[0].type if children else ""
        closed = len(children) > 1 and not children[-1].is_missing and children[-1].type in (")", "`")
        if not closed:
            self.host.unreadable(source, "a substitution is left open")
        start = children[0].end_byte if children else node.start_byte
        end = children[-1].start_byte if closed else node.end_byte
        if opener == "`":
            inner = self.host.slice(start, end)
            if "\\" in inner:
                code = unescape_backticks(inner, in_double_quotes=_inside_double_quotes(node))
                return Substitution(source, self.host.subparse(code), "`", quoted)
        kind = opener if opener in ("$(", "`", "<(", ">(") else "$("
        return Substitution(source, self.host.statements_script(node, start, end), kind, quoted)


def hidden_code(text: str, *, quoted: bool) -> bool:
    """Whether text the grammar took as a plain word still holds an unescaped backtick or `$` that starts an
    expansion for bash (`$(`, `${`, `$[`, `$NAME`, and unquoted `$'`, `$"`, `<(` and `>(`, as in the pattern
    of `[[ x = >(cmd) ]]`): code the grammar missed."""
    pattern = _HIDDEN_IN_QUOTES if quoted else _HIDDEN_UNQUOTED
    return any("`" in text[a:b] or pattern.search(text[a:b]) for a, b in unescaped_spans(text))


def _splits(literals: list[Literal], kind: str) -> bool:
    """Whether bash splits what the grammar took for one word: at an unquoted newline (which ends the command:
    the grammar glues `\\)` on the next line to the word before it), or at a blank (but in a `=~` regex,
    where bash keeps blanks inside parentheses)."""
    blanks = "\n" if kind == "regex" else " \t\n"
    return any(not part.quoted and any(c in part.text for c in blanks) for part in literals)


def _quotes_are_text(node: Node) -> bool:
    """Whether single quotes at `node` are plain characters for bash: inside double quotes (`"${v:-'x'}"`)
    or an unquoted here-document, up to the nearest command (a substitution's inside has quotes of its own).
    Arithmetic, where they are text too, is refused whole by `arithmetic`."""
    parent = node.parent
    while parent is not None and parent.type not in _OWN_QUOTES:
        if parent.type in ("string", "heredoc_body"):
            return True
        parent = parent.parent
    return False


def _numeric_subscripts(host: Host, subscripts: list[Node]) -> bool:
    """`${a[1]}`, `${a[@]}`: subscripts that are plain numbers are harmless; any other is arithmetic."""
    for sub in subscripts:
        index = sub.child_by_field_name("index")
        if index is None or not (index.type == "number" or host.text(index) in ("@", "*")):
            return False
    return True


def _inside_double_quotes(node: Node) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.type == "string":
            return True
        if parent.type in ("command_substitution", "process_substitution"):
            return False
        parent = parent.parent
    return False


def _outside(spans: list[tuple[int, int]], length: int) -> list[tuple[int, int]]:
    """The ranges of a text of `length` outside the given (start, end) spans and their backticks."""
    ranges = []
    cursor = 0
    for a, b in spans:
        ranges.append((cursor, a - 1))
        cursor = b + 1
    ranges.append((cursor, length))
    return [(a, b) for a, b in ranges if b > a]


def _strip_tabs(text: str) -> str:
    return "\n".join(line.lstrip("\t") for line in text.split("\n"))
