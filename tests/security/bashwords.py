"""Hypothesis strategies for bash words: every quote form, every parameter expansion form with its
operands, substitutions, arithmetic. tests/security/bashgrammar.py builds command lines from them.

A word is text as it appears on a command line. Words nest through command lines (`$(…)`, backticks,
`<(…)`), so the strategies take a `depth`: at 0 a word holds no substitution, no parameter expansion and
no arithmetic, and each level of nesting spends one. The payloads (`touch PWN`, the marker programs
`pwnmark1`...) sit inside quotes, operands and here-documents, where bash may or may not run them.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import TypeVar

from hypothesis import strategies as st

T = TypeVar("T")
Strategy = st.SearchStrategy[str]

# Plain word text: file names (hostile ones from the template among them), globs, options, braces, tildes.
LITERALS = (
    "x",
    "canary.txt",
    "PWN",
    "payload",
    "arith",
    "empty",
    "src",
    "src/a.py",
    "-n",
    "-rf",
    "-exec",
    "--",
    "*",
    "?*",
    "-*",
    "[-a]*",
    "src/*",
    "./*",
    "*.txt",
    "a=b",
    "~",
    "~/h",
    "{a,b}",
    "{1..2}",
    "a{,b}",
    "1",
    "0",
    "-1",
    "@",
    "%",
    ":",
    "{}",
    "a#b",
    "#",
    "../outside/canary.txt",
    "/dev/null",
    "/tmp/t",
    "pwnmark2",
    "touch",
    "a[1]",
    "x]",
    "-o",
    "--output=PWN",
    "+",
    "!",
    "a,b",
    "-v",
    "-la",
    "/",
)
# What single quotes hold: text bash never expands there, but a careless reader might.
SINGLE = (
    "x",
    "$(touch PWN)",
    "`touch PWN`",
    "a b",
    '"',
    "\\",
    "\n",
    "#",
    "${x:-$(pwnmark1)}",
    "pwnmark3",
    ";touch PWN",
    "*",
    "",
    "$((a[$(touch PWN)]))",
    "a[$(touch PWN)]",
    "<<E",
    ")",
    "}",
)
# Text inside double quotes (no expansion of its own).
DOUBLE_TEXT = (
    "x",
    "a b",
    "'",
    '\\"',
    "\\$",
    "\\`",
    "\\\\",
    "#",
    "*",
    "\n",
    "$",
    "\\\n",
    "'$(",
    ")'",
    "}",
    "{",
    "~",
    "-",
    "!",
)
# `$'…'` text: escapes that spell program names, quotes, newlines.
ANSI_C = (
    "x",
    "\\x74ouch PWN",
    "\\n",
    "\\'",
    "a b",
    "$(touch PWN)",
    "\\u0074ouch",
    "\\164ouch",
    "\\\\",
    "\\e",
    "\\cA",
    '"',
)
ESCAPED = (" ", "$", "`", "'", '"', "\\", "*", ";", "|", "&", "(", ")", "<", ">", "#", "\n", "t", "{", "}", "~", "!")
# Variables: plain, array, numeric, unset, positional and special parameters.
NAMES = ("x", "y", "i", "a", "u", "1", "@", "*", "#", "?", "-", "_", "IFS", "PWD")
ARRAY_SUBSCRIPTS = ("1", "@", "*", "$i", "i", "-1", "x")
# Each parameter expansion form: <n> a name, <w> and <v> operands (words), <a> arithmetic, <s> a subscript,
# <c> a command.
PARAMETER_FORMS = (
    "${<n>}",
    "${<n>:-<w>}",
    "${<n>-<w>}",
    "${<n>:=<w>}",
    "${<n>=<w>}",
    "${<n>:+<w>}",
    "${<n>+<w>}",
    "${<n>:?<w>}",
    "${<n>?<w>}",
    "${#<n>}",
    "${<n>#<w>}",
    "${<n>##<w>}",
    "${<n>%<w>}",
    "${<n>%%<w>}",
    "${<n>/<w>/<v>}",
    "${<n>//<w>/<v>}",
    "${<n>/#<w>/<v>}",
    "${<n>/%<w>/<v>}",
    "${<n>/<w>}",
    "${<n>^}",
    "${<n>^^}",
    "${<n>,}",
    "${<n>,,}",
    "${<n>^<w>}",
    "${<n>:1:2}",
    "${<n>: -1}",
    "${<n>:<a>}",
    "${<n>:<a>:<a>}",
    "${!<n>}",
    "${!<n>*}",
    "${!<n>@}",
    "${<n>@Q}",
    "${<n>@P}",
    "${<n>@E}",
    "${<n>@A}",
    "${<n>@K}",
    "${<n>@U}",
    "$<n>",
)
ARRAY_FORMS = (
    "${a[<s>]}",
    "${a[@]}",
    "${a[*]}",
    "${a[<a>]}",
    "${#a[@]}",
    "${!a[@]}",
    "${a[@]:1}",
    "${a[@]/<w>/<v>}",
    "${a[<s>]:-<w>}",
    "${a[$(<c>)]}",
    "${a['$(<c>)']}",
    '${a["$(<c>)"]}',
)
SPECIAL = ("$x", "$1", "$@", "$*", "$#", "$?", "$$", "$!", "$-", "$_", "$0", '"$@"', "$a", "$i", "$u")
ARITHMETIC_CONSTANTS = ("0", "1", "2", "'1'", '"1"', "-1", "16#ff", "0x1f", "' 1 '", "1 ", "'2'")
ARITHMETIC_NAMES = ("x", "i", "a[1]", "a[i]", "$x", "${x}", "i++", "++i", "x=2", "a[$i]", "u", "a[x]", "x+=1", "$i")
# Every word part without an expansion of its own, drawn at once: plain text, single quotes, `$'…'`,
# escapes, empty quotes, double quotes around plain text, special parameters.
LEAVES = (
    LITERALS
    + LITERALS
    + tuple("'" + text + "'" for text in SINGLE)
    + tuple("$'" + text + "'" for text in ANSI_C)
    + tuple("\\" + c for c in ESCAPED)
    + ("''", '""', "$''", '$""')
    + tuple('"' + text + '"' for text in DOUBLE_TEXT + SPECIAL)
    + SPECIAL
)
# What bash may run where a reader of the line sees data: each changes the workspace or is a marker
# program; those ending in `echo 1` leave a number behind (for arithmetic).
PAYLOADS = (
    "touch PWN",
    "pwnmark1",
    "pwnmark2 x",
    "rm -f canary.txt",
    "echo x > PWN",
    "mkdir PWNDIR",
    "bash -c 'touch PWN'",
    "cp canary.txt PWN",
    "pwnmark3; echo 1",
    "touch PWN; echo 1",
    "echo 1 >> canary.txt; echo 1",
)
# P is the payload.
SUBSTITUTION_FORMS = ("$(P)", "`P`", '"$(P)"', "'$(P)'", '"`P`"', "$( P )", "\\$(P)", '"\\$(P)"')
ARITHMETIC_SUBSTITUTIONS = (
    "$(P)",
    "'$(P)'",
    '"$(P)"',
    "a[$(P)]",
    "a['$(P)']",
    'a["$(P)"]',
    "`P`",
    "'`P`'",
    "x[$(P)]",
    "${x:-$(P)}",
)
OPERAND_TEXT = ("", " ", "\\}", "'}'", '"}"', "}", "/", "\\/", "a b", "'a b'", '"a b"')
_HOLE = re.compile("<[nwvacs]>")
ARITHMETIC_OPERATORS = (" + ", " * ", " - ", " == ", " < ", " && ", " || ", ", ", " = ", " += ", " ** ", "/")


def weighted(*choices: tuple[int, st.SearchStrategy[T]]) -> st.SearchStrategy[T]:
    """One of the strategies, each drawn in proportion to its weight. (`st.one_of` is uniform over its
    distinct branches, and flattens nested ones: repeating a branch there weighs nothing.) The choice is
    drawn as an index and `pick` is a plain function: the repr stays short (one listing the branches grows
    exponentially with the nesting, and Hypothesis writes it out when a test fails), and the label
    Hypothesis gives the choice does not depend on where objects sit in memory (a callable object's
    would, and with it the lines a seed draws: they changed with the modules imported before)."""
    pool = [strategy for weight, strategy in choices for _ in range(weight)]

    def pick(index: int) -> st.SearchStrategy[T]:
        return pool[index]

    return st.sampled_from(range(len(pool))).flatmap(pick)


def quoted(text: str) -> str:
    """`text` in single quotes, as shlex would write it."""
    return "'" + text.replace("'", "'\\''") + "'"


def in_backticks(script: str) -> str:
    """`script` inside backticks, its own backslashes and backticks escaped (how backticks nest)."""
    return "`" + script.replace("\\", "\\\\").replace("`", "\\`").replace("$", "\\$") + "`"


class Words:
    """The word strategies. `script(depth)` is the command line strategy (bashgrammar.Grammar's), used for
    substitutions; `command_text(depth)` gives the text of one simple command (the `<c>` of ARRAY_FORMS).
    Where bash may run code (substitution, operand, arithmetic, double quotes, here-documents) a payload
    (PAYLOADS) is drawn often: the places a reader of the line can miss are the point."""

    def script(self, depth: int) -> Strategy:
        raise NotImplementedError

    def command_text(self, depth: int) -> Strategy:
        raise NotImplementedError

    @functools.cache  # noqa: B019 - one grammar per process; strategies are built once per depth
    def word(self, depth: int) -> Strategy:
        """An unquoted word: mostly plain (a file name, an option, a glob, quoted text), else one with
        expansions, substitutions or several parts."""
        leaf = st.sampled_from(LEAVES)
        if depth == 0:
            return weighted((3, leaf), (1, st.tuples(leaf, leaf).map("".join)), (1, self.payload_substitution()))
        return weighted((1, leaf), (1, self.fancy(depth)))

    @functools.cache  # noqa: B019
    def fancy(self, depth: int) -> Strategy:
        """A word with something for bash to expand in it, or of two parts."""
        return weighted(
            (2, self.double(depth)),
            (1, self.locale(depth)),
            (3, self.parameter(depth)),
            (1, self.arithmetic_expansion(depth)),
            (2, self.substitution(depth)),
            (1, self.process(depth)),
            (1, st.sampled_from(SPECIAL)),
            (1, st.tuples(self.part(depth), self.part(depth)).map("".join)),
        )

    @functools.cache  # noqa: B019
    def part(self, depth: int) -> Strategy:
        leaf = st.sampled_from(LEAVES)
        return leaf if depth <= 1 else weighted((3, leaf), (1, self.fancy(depth - 1)))

    @functools.cache  # noqa: B019
    def operand(self, depth: int) -> Strategy:
        """The word inside `${x:-W}`: any word, a payload in a substitution or in quotes, spaces, a closing
        brace escaped or quoted."""
        piece = weighted((2, self.word(depth)), (2, self.payload_substitution()), (1, st.sampled_from(OPERAND_TEXT)))
        return weighted((3, piece), (1, st.tuples(piece, piece).map("".join)))

    @functools.cache  # noqa: B019
    def payload_substitution(self) -> Strategy:
        """A payload in a substitution, as is or quoted: `$(touch PWN)`, `"$(…)"`, `'$(…)'`, backticks."""
        payload = st.sampled_from(PAYLOADS)
        return st.tuples(st.sampled_from(SUBSTITUTION_FORMS), payload).map(lambda t: t[0].replace("P", t[1]))

    @functools.cache  # noqa: B019
    def double(self, depth: int) -> Strategy:
        return self.double_inner(depth).map(lambda text: '"' + text + '"')

    def locale(self, depth: int) -> Strategy:
        return self.double_inner(depth).map(lambda text: '$"' + text + '"')

    @functools.cache  # noqa: B019
    def double_inner(self, depth: int) -> Strategy:
        """What double quotes (and an unquoted here-document) hold: text and every expansion."""
        text = st.sampled_from(DOUBLE_TEXT + DOUBLE_TEXT + SPECIAL)
        expanded = [self.payload_substitution()]
        if depth > 0:
            expanded += [self.parameter(depth), self.arithmetic_expansion(depth), self.substitution(depth)]
        inner = weighted((2, text), (2, st.one_of(*expanded)))
        return st.one_of(inner, st.tuples(inner, inner).map("".join), st.tuples(text, inner, text).map("".join))

    # ---- expansions ----

    @functools.cache  # noqa: B019
    def parameter(self, depth: int) -> Strategy:
        """Every `${…}` form over every kind of name, its operands words of one level less (only the holes a
        form has are drawn)."""
        operand = self.operand(depth - 1)
        holes = {
            "<w>": operand,
            "<v>": operand,
            "<a>": self.arithmetic(depth - 1),
            "<c>": self.code(depth - 1),
            "<s>": st.sampled_from(ARRAY_SUBSCRIPTS),
            "<n>": st.sampled_from(NAMES),
        }
        groups: dict[tuple[str, ...], list[str]] = {}
        for form in PARAMETER_FORMS + ARRAY_FORMS:
            groups.setdefault(tuple(dict.fromkeys(_HOLE.findall(form))), []).append(form)
        return weighted(
            *(
                (len(forms), st.tuples(st.sampled_from(forms), *(holes[hole] for hole in names)).map(_filler(names)))
                for names, forms in groups.items()
            )
        )

    @functools.cache  # noqa: B019
    def code(self, depth: int) -> Strategy:
        """What a substitution holds: mostly a payload, else any command line of `depth`."""
        return weighted((2, st.sampled_from(PAYLOADS)), (1, self.script(depth)))

    @functools.cache  # noqa: B019
    def substitution(self, depth: int) -> Strategy:
        """`$(…)` and backticks, plain and nested (a backtick inside backticks escaped, or not)."""
        code = self.code(depth - 1)
        return st.one_of(
            code.map(lambda s: f"$({s})"),
            code.map(lambda s: f"$( {s} )"),
            code.map(in_backticks),
            code.map(lambda s: f"`{s}`"),
        )

    @functools.cache  # noqa: B019
    def process(self, depth: int) -> Strategy:
        code = self.code(depth - 1)
        return st.one_of(code.map(lambda s: f"<({s})"), code.map(lambda s: f">({s})"))

    # ---- arithmetic ----

    @functools.cache  # noqa: B019
    def arithmetic_expansion(self, depth: int) -> Strategy:
        arithmetic = self.arithmetic(depth)
        return st.one_of(arithmetic.map(lambda a: f"$(({a}))"), arithmetic.map(lambda a: f"$[{a}]"))

    @functools.cache  # noqa: B019
    def arithmetic(self, depth: int) -> Strategy:
        """An arithmetic expression: numbers, variables (whose values bash evaluates again), subscripts,
        quotes, substitutions, operators, assignments, the ternary."""
        atom = self.arithmetic_atom(depth)
        return st.one_of(
            atom,
            st.tuples(atom, st.sampled_from(ARITHMETIC_OPERATORS), atom).map("".join),
            st.tuples(atom, atom, atom).map(lambda t: f"{t[0]} ? {t[1]} : {t[2]}"),
            atom.map(lambda a: f"({a})"),
            atom.map(lambda a: f"!{a}"),
        )

    @functools.cache  # noqa: B019
    def arithmetic_atom(self, depth: int) -> Strategy:
        constant = st.sampled_from(ARITHMETIC_CONSTANTS)
        atoms = weighted((3, constant), (1, st.sampled_from(ARITHMETIC_NAMES)))
        payload = st.sampled_from(PAYLOADS)
        hidden = st.tuples(st.sampled_from(ARITHMETIC_SUBSTITUTIONS), payload).map(lambda t: t[0].replace("P", t[1]))
        if depth <= 0:
            return weighted((3, atoms), (2, hidden))
        return weighted((3, atoms), (2, hidden), (1, self.parameter(depth)))


def _filler(holes: tuple[str, ...]) -> Callable[[tuple[str, ...]], str]:
    """Fills a form's `holes` (named in the order drawn) in one pass: a filling may hold any text."""

    def filled(drawn: tuple[str, ...]) -> str:
        values = dict(zip(holes, drawn[1:], strict=True))
        return _HOLE.sub(lambda match: values[match.group()], drawn[0])

    return filled
