"""The typed shape of a parsed command line: what bash would run, with nothing left for a visitor to guess.

A `Script` is a sequence of `Pipeline`s (`;`, `&&`, `||`, `&` and newlines all separate them; the
visitors treat every pipeline as one that may run). A pipeline's stages are `SimpleCommand`s or
`Compound`s (subshells, groups, loops, conditionals, functions, tests). A `Word` is made of parts:
literal text after quote removal, and the dynamic parts bash only knows when it runs (expansions,
substitutions, arithmetic). Every piece of code a word or a here-document runs is a nested `Script`.

What the grammar could not read is kept as `Unreadable` entries on the script it appeared in, so a
visitor that must fail closed (the classifier) can, and one that only reports what it is sure of (the
denylist) can still look at the rest.
"""

from __future__ import annotations

import enum
import glob
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property

NESTED_TOO_DEEPLY = "commands nested too deeply to check"
_GLOB_CHARS = frozenset("*?[")
# `{a,b}` and `{1..3}`: unquoted braces around a comma or `..` expand into several words.
_BRACES = re.compile(r"\{[^{}]*(?:,|\.\.)[^{}]*\}")


@dataclass(frozen=True)
class Literal:
    """Text bash takes as it is, quotes removed. Quoted text is neither globbed nor tilde- or brace-expanded."""

    text: str
    quoted: bool


@dataclass(frozen=True)
class Expansion:
    """`$NAME`, `${NAME}`, `${NAME:-word}`, `$@`, ...: a value only known when the command runs."""

    source: str
    name: str | None  # the variable of `$NAME`/`${NAME}`, None for anything else
    quoted: bool  # in double quotes: the value is neither split into words nor globbed
    scripts: tuple[Script, ...] = ()  # code it runs: `${x:-$(cmd)}`


@dataclass(frozen=True)
class Substitution:
    """`$(...)`, backticks, `<(...)`, `>(...)`: code whose output (or a pipe to it) becomes the word."""

    source: str
    script: Script
    kind: str  # "$(", "`", "<(" or ">("
    quoted: bool

    @property
    def scripts(self) -> tuple[Script, ...]:
        return (self.script,)


@dataclass(frozen=True)
class Arithmetic:
    """`$((...))`: bash evaluates it, and a variable holding `a[$(cmd)]` runs `cmd` while it does."""

    source: str
    names: frozenset[str]  # variables it reads
    scripts: tuple[Script, ...] = ()


@dataclass(frozen=True)
class Opaque:
    """A part paicli does not decode (`$'...'`, `$"..."`). Always matched by an `Unreadable` entry."""

    source: str
    scripts: tuple[Script, ...] = ()


Part = Literal | Expansion | Substitution | Arithmetic | Opaque


@dataclass(frozen=True)
class Word:
    source: str
    parts: tuple[Part, ...]

    @cached_property
    def braces(self) -> bool:
        """Whether bash's brace expansion would turn this into several words."""
        unquoted = "".join(p.text if isinstance(p, Literal) and not p.quoted else "x" for p in self.parts)
        return bool(_BRACES.search(unquoted))

    @cached_property
    def static(self) -> bool:
        """True when the text is exactly what bash passes on, up to pathname expansion (see `glob`)."""
        return all(isinstance(p, Literal) for p in self.parts) and not self.braces

    @cached_property
    def text(self) -> str:
        """The literal text, with each dynamic part written as in the source (`$HOME`, `$(pwd)`)."""
        return "".join(p.text if isinstance(p, Literal) else p.source for p in self.parts)

    @property
    def value(self) -> str | None:
        """The text of a static word, None for a dynamic one."""
        return self.text if self.static else None

    @cached_property
    def glob(self) -> bool:
        """Whether bash would expand it as a pathname pattern (unquoted `*`, `?` or `[`)."""
        return any(isinstance(p, Literal) and not p.quoted and _GLOB_CHARS & set(p.text) for p in self.parts)

    @cached_property
    def pattern(self) -> str:
        """The pathname pattern (quoted parts escaped) for `glob.glob`; meaningful for static words."""
        return "".join(glob.escape(p.text) if p.quoted else p.text for p in self.parts if isinstance(p, Literal))

    @property
    def tilde(self) -> bool:
        """Whether it starts with an unquoted `~` (bash puts a home folder there)."""
        first = self.parts[0] if self.parts else None
        return isinstance(first, Literal) and not first.quoted and first.text.startswith("~")

    @property
    def scripts(self) -> Iterator[Script]:
        for part in self.parts:
            yield from part.scripts if not isinstance(part, Literal) else ()

    @property
    def unquoted_dynamic(self) -> bool:
        """Whether a dynamic part is unquoted, so its value is split into several words and globbed."""
        return any(isinstance(p, Expansion | Substitution | Arithmetic | Opaque) and not _quoted(p) for p in self.parts)


def _quoted(part: Part) -> bool:
    return bool(getattr(part, "quoted", False))


@dataclass(frozen=True)
class Redirect:
    operator: str  # as written: >, >>, >|, &>, &>>, <, >&, <&, <&-, >&-
    target: Word | None  # None when it closes a descriptor
    fd: str | None = None

    @property
    def writes(self) -> bool:
        return ">" in self.operator and not self.duplicates

    @property
    def duplicates(self) -> bool:
        """`2>&1`, `>&-`: copies or closes a descriptor instead of opening a file."""
        if self.operator.endswith("-"):
            return True
        if self.operator in (">&", "<&") and self.target is not None:
            return bool(re.fullmatch(r"[0-9]+-?|-", self.target.text))
        return False


@dataclass(frozen=True)
class HereDoc:
    """`<<DELIM` ... `DELIM`: the body becomes the command's stdin."""

    body: str
    expands: bool  # unquoted delimiter: bash expands `$x`, `$(...)` and backticks in the body
    scripts: tuple[Script, ...] = ()  # the code that expansion runs
    dynamic: bool = False  # the body holds expansions, so the data is only known when it runs


@dataclass(frozen=True)
class HereString:
    """`<<< WORD`: the word (and a newline) becomes the command's stdin."""

    word: Word


Input = HereDoc | HereString


@dataclass(frozen=True)
class Assignment:
    name: str  # `x`, or `a[...]` for an element
    value: Word | None  # None for `x=` and for arrays
    elements: tuple[Word, ...] = ()  # `x=(a b c)`
    subscript: Word | None = None  # `a[$i]=1`: bash evaluates the subscript as arithmetic

    @property
    def words(self) -> Iterator[Word]:
        yield from (self.value,) if self.value is not None else ()
        yield from self.elements
        yield from (self.subscript,) if self.subscript is not None else ()


@dataclass(frozen=True)
class SimpleCommand:
    source: str
    words: tuple[Word, ...]  # the command name first; () for a line of assignments only
    assignments: tuple[Assignment, ...] = ()
    redirects: tuple[Redirect, ...] = ()
    inputs: tuple[Input, ...] = ()

    @property
    def name(self) -> Word | None:
        return self.words[0] if self.words else None


class Kind(enum.StrEnum):
    SUBSHELL = "subshell"
    GROUP = "group"
    IF = "if"
    WHILE = "while"
    FOR = "for"
    CASE = "case"
    FUNCTION = "function"
    TEST = "test"  # [[ ... ]] and [ ... ]
    ARITHMETIC = "arithmetic"  # (( ... )) and for (( ... ))


@dataclass(frozen=True)
class Compound:
    source: str
    kind: Kind
    scripts: tuple[Script, ...] = ()  # conditions and bodies, in source order
    words: tuple[Word, ...] = ()  # words it expands: loop values, the case subject and patterns, test operands
    redirects: tuple[Redirect, ...] = ()
    inputs: tuple[Input, ...] = ()
    name: str | None = None  # the function's name or the loop variable
    arithmetic: tuple[Arithmetic, ...] = ()  # what (( )), for (( )) and [[ -eq ]] evaluate


Command = SimpleCommand | Compound


@dataclass(frozen=True)
class Pipeline:
    commands: tuple[Command, ...]


@dataclass(frozen=True)
class Unreadable:
    source: str
    reason: str


@dataclass(frozen=True)
class Script:
    source: str
    pipelines: tuple[Pipeline, ...] = ()
    unreadable: tuple[Unreadable, ...] = field(default=())


@dataclass(frozen=True)
class Inner:
    """Something a command runs on its behalf: a command (`words`) or a piece of shell code (`code`)."""

    via: str  # "env", "xargs", "find -exec", "bash -c", "eval", ...
    words: tuple[Word, ...] = ()
    code: str | None = None
    dynamic: bool = False  # part of the code is only known when it runs
    appended: bool = False  # more arguments come from elsewhere when it runs (xargs, find -exec ... +)
    human: str | None = None  # why a person must look at it even in yolo (code or programs set by a variable)


def word_suffix(word: Word, start: int) -> Word:
    """The part of `word` from character `start` of its text on (`CMD` of `--to-command=CMD`); dynamic
    when any part of the word is."""
    text = word.text[start:]
    return Word(text, (Literal(text, quoted=True) if word.static else Expansion(text, None, quoted=True),))


def filled_in(word: Word, placeholder: str) -> Word:
    """A word the program fills in when it runs (`{}` of find -exec, xargs -I): only known then."""
    if placeholder not in word.text:
        return word
    return Word(word.text, (Expansion(word.text, None, quoted=True),))
