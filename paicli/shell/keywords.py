"""Reserved words and assignments, where a command starts: places the grammar and bash read differently.

Bash takes a word as a reserved word (`if`, `[[`, `{`, `!`, ...) only when it stands alone, unquoted, where
a command starts; `time` is a keyword that times a whole pipeline. The grammar is looser both ways: it
reads `! ! ls` with the second `!` as a program, and `[[""` with `[[` as a keyword. Both places make the
line unreadable (the classifier fails closed). So does `_=1 ls`, an assignment that the grammar reads
as a command named `_=1`.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from paicli.shell.syntax import Literal, Word

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")  # `NAME=` or `NAME+=` at the start of a word
# Words bash reads as keywords at the start of a command (`time` apart: see `keyword_misread`).
_RESERVED = frozenset(
    {
        "!",
        "{",
        "}",
        "if",
        "then",
        "else",
        "elif",
        "fi",
        "case",
        "esac",
        "for",
        "select",
        "while",
        "until",
        "do",
        "done",
        "in",
        "function",
        "[[",
        "]]",
        "coproc",
    }
)
# Bash's reserved words where the grammar uses them as keywords (a subscript's `[` and `]` are not one).
_KEYWORDS = (_RESERVED - {"coproc"}) | {"[", "]"}
_NOT_KEYWORD = {
    "subscript",
    "expansion",
    "brace_expression",
    "array",
    "arithmetic_expansion",
    "unary_expression",
    "binary_expression",
    "parenthesized_expression",
    "ternary_expression",
    "postfix_expression",
}
# What may stand next to a reserved word: bash's metacharacters (and a backtick, whose inside bash reads apart).
_WORD_ENDS = {bytes([c]) for c in b" \t\n;&|()<>`"}


def misread_tokens(root: Node, data: bytes) -> str | None:
    """Tokens the grammar splits off where bash reads on: a reserved word inside a longer word (bash reads
    `[[""`, `if""true` or `}x` as one word, a command named `[[`, `iftrue`, ..., never as a keyword, so
    `[["" =>(cmd) ]]` runs `cmd`), and a `<` or `>` just before `(` (a process substitution for bash, a
    comparison in the grammar's `[[ x = a>(cmd) ]]`), and `((` read as two subshells (after `!` or `time`,
    where bash evaluates arithmetic, which runs backticks even between single quotes)."""
    stack = [root]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.is_named or node.parent is None:
            continue
        before = data[node.start_byte - 1 : node.start_byte] if node.start_byte else b" "
        after = data[node.end_byte : node.end_byte + 1] or b" "
        if node.type in ("<", ">") and after == b"(":
            return f"bash reads {node.type}( as a process substitution, which the grammar does not"
        if node.type == "(" and node.parent.type == "subshell" and after == b"(":  # `! ((x))`, `time ((x))`
            return "bash reads (( as arithmetic, which the grammar reads as two subshells"
        if (
            node.type in _KEYWORDS
            and node.parent.type not in _NOT_KEYWORD
            and not (before in _WORD_ENDS and after in _WORD_ENDS)
        ):
            return f"the grammar reads {node.type!r} as a keyword inside a word, which bash does not"
    return None


def keyword_misread(words: list[Word]) -> str | None:
    """Where bash reads a reserved word the grammar took for a command name (`! ! ls`, `! if ...`), or
    `time` as the keyword it is for bash and a program for the grammar: `time` takes a whole pipeline
    (`time ! ls`, `time { ls; }`, `time x=1 ls`), and any option but `-p` is the command it runs."""
    plain = [
        w.parts[0].text if len(w.parts) == 1 and isinstance(w.parts[0], Literal) and not w.parts[0].quoted else None
        for w in words
    ]
    if plain and plain[0] in _RESERVED:
        return f"bash reads {plain[0]!r} here as a keyword, which the grammar does not"
    if plain and plain[0] == "time":
        rest = plain[1:]
        while rest and rest[0] in ("-p", "--"):
            rest = rest[1:]
        following = rest[0] if rest else ""
        if (
            following is None
            or following in _RESERVED
            or following == "time"
            or following.startswith("-")
            or (_ASSIGNMENT.match(following))
        ):
            return "bash's `time` keyword times what follows it in a way the grammar does not read"
    return None


def read_as_assignment(word: Word) -> bool:
    """Whether bash reads `word`, standing where a command name goes, as an assignment (`NAME=`, `NAME+=`)."""
    first = word.parts[0] if word.parts else None
    return isinstance(first, Literal) and not first.quoted and bool(_ASSIGNMENT.match(first.text))
