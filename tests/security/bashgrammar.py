"""A grammar of bash command lines as Hypothesis strategies, for the differential test against bash
(tests/security/test_bash_agreement.py) and `python -m bench fuzz-shell`.

`Grammar().case()` draws one command line: simple commands from a vocabulary (safe readers, writers and
runners, marker programs with unique names, none of which really runs in the probe) with words of every
quote and expansion form (tests/security/bashwords.py), redirections of every kind, here-documents
(quoted, unquoted, `<<-`, several on a line, inside substitutions) and here-strings, arithmetic in all
its forms, `[[ … ]]` and `test`, functions, aliases, the builtins that run code, wrappers, lists and
pipelines, subshells, groups, if/while/until/for/case/select, comments, line continuations and
assignments. Nesting is bounded (`depth`, 3 by default) so cases stay small. Loops always end: a `while`
body ends in `break`, stdin is /dev/null and the stand-ins exit 0.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as with_seed
from hypothesis import strategies as st

from tests.security.bashwords import LEAVES, Strategy, Words, in_backticks, quoted, weighted

MARKERS = tuple(f"pwnmark{n}" for n in range(1, 7))
# Commands SAFE on their own in the template workspace.
READERS = (
    "ls",
    "ls -la",
    "cat canary.txt",
    "grep -n x canary.txt",
    "echo hi",
    "printf '%s\\n' x",
    "test -f canary.txt",
    "git status",
    "wc -l canary.txt",
    "head -1 canary.txt",
    "true",
    "pwd",
    "sort canary.txt",
    ":",
    "git log --oneline",
    "find . -name '*.txt'",
    "stat canary.txt",
    "[ -f x ]",
)
# Commands that write, run code or reach out (only stand-ins run).
RUNNERS = (
    "touch PWN",
    "rm -f canary.txt",
    "bash -c 'touch PWN'",
    "sh payload",
    "python3 -c 'print(1)'",
    "mkfs.ext4 img",
    "chmod 600 canary.txt",
    "cp canary.txt PWN",
    "mv canary.txt moved",
    "mkdir PWNDIR",
    "git commit -m x",
    "sed -i s/a/b/ canary.txt",
    "perl -e 1",
    "make",
    "history -w PWN",
    "git -c alias.q='!touch PWN' q",
    "tee PWN",
)
READER_NAMES = (
    "ls",
    "cat",
    "grep",
    "echo",
    "printf",
    "test",
    "git",
    "wc",
    "head",
    "sort",
    "true",
    "find",
    "stat",
    "[",
    "pwd",
    "cut",
    "uniq",
    "du",
)
RUNNER_NAMES = (
    "touch",
    "rm",
    "bash",
    "sh",
    "python3",
    "mkfs.ext4",
    "cp",
    "chmod",
    "tee",
    "sed",
    "/bin/ls",
    "/usr/bin/touch",
    "./payload",
    "f",
    "g",
)
FUNCTIONS = ("f", "g", "ls", "cat", "echo")  # a function may take a program's or a builtin's name
NAMES = READER_NAMES + READER_NAMES + RUNNER_NAMES + MARKERS
ASSIGNED = ("x", "y", "i", "u", "IFS", "PS4", "PATH", "BASH_ENV", "a[1]", "a[i]", "a[$i]", "a[x]", "HOME")
# Values that make later expansions run code: an arithmetic subscript, a program name, glob characters.
VALUES = (
    "'a[$(touch PWN)]'",
    "pwnmark4",
    "touch",
    "1",
    "'$(touch PWN)'",
    "'*'",
    '"a b"',
    "'-exec'",
    "x",
    "'a[$(pwnmark5)]'",
    "'$(pwnmark5)'",
    "()",
    "(1 2)",
    "('$(touch PWN)' x)",
)
TARGETS = (
    "PWN",
    "canary.txt",
    "/dev/null",
    "../outside/PWN",
    "/tmp/t",
    "~/h",
    "*",
    "-rf",
    "'a b'",
    "$x",
    "empty",
    "src/a.py",
)
# Builtins that change what later words expand to or which command a name runs.
SETTINGS = (
    "builtin echo x",
    "exec 3>PWN",
    "exec 3<canary.txt",
    "exec >/dev/null",
    "hash -p /usr/bin/touch ls; ls x",
    "set -x",
    "enable -n echo",
    "shopt -s extglob",
    "trap 'touch PWN' EXIT",
    "command -v ls",
    "type ls",
    "set -f",
    "shopt -s dotglob",
    "shopt -s nullglob",
    "shopt -s nocaseglob",
    "GLOBIGNORE=x",
    "set -o posix",
    "unset -f ls",
    "unalias -a",
    "enable -n printf test",
    "set -u",
)
SEPARATORS = ("; ", " && ", " || ", "\n", " & ", " # c\n", " #'\n", " # $(\n", " #`\n", ";\n", " # <<E\n")


@dataclass(frozen=True)
class Code:
    """Part of a command line, and the here-document bodies it still owes (they follow the next newline)."""

    text: str
    docs: str = ""

    def then(self, separator: str, other: Code) -> Code:
        if separator.endswith("\n") and not separator.endswith("\\\n"):
            return Code(self.text + separator + self.docs + other.text, other.docs)
        return Code(self.text + separator + other.text, self.docs + other.docs)

    def closed(self, before_close: str) -> str:
        """The text ready for a closing token (`}`, `)`, `fi`, ...): its here-documents written out first."""
        if self.docs:
            return self.text + "\n" + self.docs
        if before_close.startswith(";") and self.text.rstrip(" ").endswith((";", "&", "\n")):
            return self.text + " "  # `{ ls & }`, not `{ ls &; }`
        return self.text + before_close

    def line(self) -> str:
        return self.text + ("\n" + self.docs if self.docs else "")


class Grammar(Words):
    def __init__(self, depth: int = 3) -> None:
        self.depth = depth

    def case(self) -> Strategy:
        """One command line as bash -c would be given it (a comment may end it)."""
        ending = st.sampled_from(("", "", "", "", " # c", " #'", "\n"))
        return st.builds(lambda code, end: Code(code.text + end, code.docs).line(), self.list(self.depth), ending)

    # ---- lists and pipelines ----

    def script(self, depth: int) -> Strategy:
        return self._script(depth)

    @functools.cache  # noqa: B019
    def _script(self, depth: int) -> Strategy:
        return self.list(depth).map(Code.line)

    @functools.cache  # noqa: B019
    def list(self, depth: int) -> st.SearchStrategy[Code]:
        """One to three pipelines joined by `;`, `&&`, `||`, `&`, newlines, comments and continuations."""
        pipeline = self.pipeline(depth)
        link = st.tuples(st.sampled_from(SEPARATORS), pipeline)
        rest = weighted((3, st.just(())), (2, st.tuples(link)), (1, st.tuples(link, link)))
        return st.builds(_joined, pipeline, rest, st.sampled_from(("", "", "", "", ";", " &")))

    @functools.cache  # noqa: B019
    def pipeline(self, depth: int) -> st.SearchStrategy[Code]:
        command = self.command(depth)
        piped = st.tuples(command, st.sampled_from((" | ", " |& ", " |\n", " | \\\n")), command)
        prefixed = st.tuples(st.sampled_from(("! ", "time ", "time -p ", "! ! ")), command)
        return weighted(
            (6, command),
            (2, piped.map(lambda t: t[0].then(t[1], t[2]))),
            (1, prefixed.map(lambda t: Code(t[0] + t[1].text, t[1].docs))),
        )

    # ---- commands ----

    @functools.cache  # noqa: B019
    def command(self, depth: int) -> st.SearchStrategy[Code]:
        """Mostly a plain command (from the vocabulary, or a name and words); else an assignment, a
        builtin that runs code, a compound command, a wrapper, a function, an alias."""
        plain = st.one_of(self.simple(depth), self.fixed())
        other = [self.assignment(depth), self.builtin(depth)]
        if depth > 0:
            redirected = st.tuples(self.compound(depth), self.redirects(depth)).map(lambda t: _with(t[0], t[1]))
            other += [self.compound(depth), redirected, self.wrapper(depth), self.definition(depth), self.alias(depth)]
        return weighted((3, plain), (2, st.one_of(*other)))

    def fixed(self) -> st.SearchStrategy[Code]:
        return st.sampled_from(READERS + READERS + RUNNERS + MARKERS).map(Code)

    @functools.cache  # noqa: B019
    def simple(self, depth: int) -> st.SearchStrategy[Code]:
        """[assignments] name [arguments] [redirections], the name from the vocabulary or any word. Mostly
        a plain one: a name and plain words."""
        vocabulary = st.sampled_from(NAMES)
        name = weighted((6, vocabulary), (1, self.word(depth)))
        prefix = weighted((8, st.just("")), (1, self.assigned(depth).map(lambda a: a + " ")))
        word = self.word(depth).map(lambda w: " " + w)
        words = weighted((1, st.just("")), (2, word), (1, st.tuples(word, word).map("".join)))
        redirects = weighted((3, st.just(())), (1, self.redirects(depth)))
        fancy = st.builds(lambda p, n, w, r: _with(Code(p + n + w), r), prefix, name, words, redirects)
        return weighted((1, _plain(0)), (3, _plain(1)), (2, _plain(2)), (3, fancy))

    def command_text(self, depth: int) -> Strategy:
        return self._command_text(depth)

    @functools.cache  # noqa: B019
    def _command_text(self, depth: int) -> Strategy:
        return st.one_of(self.fixed(), self.simple(depth)).map(Code.line)

    @functools.cache  # noqa: B019
    def assigned(self, depth: int) -> Strategy:
        value = weighted((1, st.sampled_from(VALUES)), (2, self.word(depth)))
        return st.builds(lambda n, op, v: n + op + v, st.sampled_from(ASSIGNED), st.sampled_from(("=", "+=")), value)

    @functools.cache  # noqa: B019
    def assignment(self, depth: int) -> st.SearchStrategy[Code]:
        """Variables set alone, or by the builtins that name them (`declare`, `read`, `printf -v`, `let`)."""
        name = st.sampled_from(("x", "a[1]", "'a[$(touch PWN)]'", "a[$(pwnmark6)]", '"a[\\$(touch PWN)]"', "i"))
        arithmetic = self.arithmetic(depth)
        forms = st.one_of(
            self.assigned(depth),
            st.tuples(
                st.sampled_from(("declare", "declare -i", "local", "export", "readonly", "typeset -a", "declare -n")),
                self.assigned(depth),
            ).map(" ".join),
            arithmetic.map(lambda a: "let " + quoted(a)),
            st.sampled_from(("let x=1+1", "let i++", "let a[1]=x", "let x=a[\\$(touch\\ PWN)]")),
            st.tuples(name, self.word(depth)).map(lambda t: f"printf -v {t[0]} %s {t[1]}"),
            name.map(lambda n: f"read {n} <<< 1"),
            name.map(lambda n: f"unset {n}"),
            name.map(lambda n: f"test -v {n}"),
            name.map(lambda n: f"[ -v {n} ]"),
            name.map(lambda n: f"[[ -v {n} ]]"),
            name.map(lambda n: f"mapfile -t {n} < canary.txt"),
        )
        return forms.map(Code)

    @functools.cache  # noqa: B019
    def builtin(self, depth: int) -> st.SearchStrategy[Code]:
        """The builtins that run code or change how names resolve."""
        word = self.word(depth)
        inner = self.command_text(depth)
        forms = [
            word.map(lambda w: "eval " + w),
            st.sampled_from(("source payload", ". ./payload", "source empty", ". empty")),
            inner.map(lambda c: "command -p " + c),
            inner.map(lambda c: "command " + c),
            inner.map(lambda c: "exec " + c),
            st.sampled_from(SETTINGS),
        ]
        if depth > 0:
            body = self.script(depth - 1)
            forms += [
                body.map(lambda s: "eval " + quoted(s)),
                body.map(lambda s: 'eval "' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'),
                body.map(lambda s: "trap " + quoted(s) + " EXIT"),
                body.map(lambda s: f"PS4={quoted('$(' + s + ')')}; set -x; :"),
                body.map(lambda s: f"mapfile -C {quoted(s)} -c 1 v < canary.txt"),
                body.map(lambda s: f"bash -c {quoted(s)}"),
                body.map(lambda s: f"sh -c {quoted(s)}"),
            ]
        return st.one_of(*forms).map(Code)

    @functools.cache  # noqa: B019
    def wrapper(self, depth: int) -> st.SearchStrategy[Code]:
        """Programs that run other programs: env, xargs, find -exec, nohup, timeout, ..."""
        inner = self.command_text(depth - 1)
        forms = st.one_of(
            inner.map(lambda c: "env " + c),
            inner.map(lambda c: "env -i x=1 " + c),
            inner.map(lambda c: "echo x | xargs " + c),
            inner.map(lambda c: "xargs -a canary.txt " + c),
            inner.map(lambda c: "find . -exec " + c + " {} \\;"),
            inner.map(lambda c: "find . -name '*.txt' -exec " + c + " {} +"),
            inner.map(lambda c: "nohup " + c),
            inner.map(lambda c: "timeout 5 " + c),
            st.tuples(
                st.sampled_from(("find", "ls", "cat", "sort", "grep x", "du", "stat")),
                st.sampled_from(("*", "-*", "?*", "[-a]*", "./*", "*.txt")),
            ).map(" ".join),
        )
        return forms.map(Code)

    # ---- compound commands ----

    @functools.cache  # noqa: B019
    def compound(self, depth: int) -> st.SearchStrategy[Code]:
        body = self.list(depth - 1)
        word = self.word(depth - 1)
        arithmetic = self.arithmetic(depth - 1)
        words = st.lists(word, min_size=1, max_size=2).map(" ".join)
        return st.one_of(
            body.map(lambda b: Code("( " + b.closed(" ") + ")")),
            body.map(lambda b: Code("{ " + b.closed("; ") + "}")),
            st.tuples(body, body).map(lambda t: Code(f"if {t[0].closed('; ')}then {t[1].closed('; ')}fi")),
            st.tuples(body, body, body).map(
                lambda t: Code(f"if {t[0].closed('; ')}then {t[1].closed('; ')}else {t[2].closed('; ')}fi")
            ),
            st.tuples(st.sampled_from(("while", "until")), body, body).map(
                lambda t: Code(f"{t[0]} {t[1].closed('; ')}do {t[2].closed('; ')}break; done")
            ),
            st.tuples(words, body).map(lambda t: Code(f"for v in {t[0]}; do {t[1].closed('; ')}done")),
            st.tuples(arithmetic, arithmetic, body).map(
                lambda t: Code(f"for (({t[0]}; {t[1]}; i++)); do {t[2].closed('; ')}break; done")
            ),
            st.tuples(words, body).map(lambda t: Code(f"select v in {t[0]}; do {t[1].closed('; ')}break; done")),
            st.tuples(word, word, body, st.sampled_from((";;", ";&", ";;&"))).map(
                lambda t: Code(f"case {t[0]} in {t[1]}) {t[2].closed(' ')}{t[3]} *) ;; esac")
            ),
            arithmetic.map(lambda a: Code(f"(( {a} ))")),
            self.conditional(depth - 1).map(lambda c: Code(f"[[ {c} ]]")),
            self.test(depth - 1).map(Code),
        )

    @functools.cache  # noqa: B019
    def conditional(self, depth: int) -> Strategy:
        """What `[[ … ]]` holds: string, pattern, regex, arithmetic and file tests, negated and combined."""
        word = self.word(depth)
        unary = st.tuples(st.sampled_from(("-v", "-n", "-z", "-f", "-e", "! -v")), word).map(" ".join)
        binary = st.tuples(word, st.sampled_from(("==", "!=", "=~", "-eq", "-lt", "-ge", "<", "=")), word)
        test = st.one_of(unary, binary.map(" ".join))
        joined = st.tuples(test, st.sampled_from((" && ", " || ")), test).map("".join)
        return st.one_of(test, joined, test.map(lambda t: f"! {t}"), test.map(lambda t: f"( {t} )"))

    @functools.cache  # noqa: B019
    def test(self, depth: int) -> Strategy:
        word = self.word(depth)
        binary = st.tuples(word, st.sampled_from(("=", "!=", "-eq", "-lt", "-nt")), word).map(" ".join)
        unary = st.tuples(st.sampled_from(("-f", "-v", "-n", "-z", "!")), word).map(" ".join)
        return st.tuples(st.sampled_from(("test", "[")), st.one_of(binary, unary)).map(
            lambda t: f"{t[0]} {t[1]}" + (" ]" if t[0] == "[" else "")
        )

    @functools.cache  # noqa: B019
    def definition(self, depth: int) -> st.SearchStrategy[Code]:
        """A function defined (three ways), then called or not."""
        body = self.list(depth - 1)
        name = st.sampled_from(FUNCTIONS)
        forms = st.sampled_from(("{n}() {{ {b}}}", "function {n} {{ {b}}}", "function {n}() ( {b})"))
        call = st.sampled_from(("", "; {n}", "\n{n} x", " && {n}"))
        return st.builds(
            lambda form, n, b, c: Code(form.format(n=n, b=b.closed("; " if "{" in form else " ")) + c.format(n=n)),
            forms,
            name,
            body,
            call,
        )

    @functools.cache  # noqa: B019
    def alias(self, depth: int) -> st.SearchStrategy[Code]:
        """`shopt -s expand_aliases`, an alias, a newline, its use (bash expands aliases line by line)."""
        value = st.one_of(self.command_text(depth - 1), st.sampled_from(("touch ", "eval ", "pwnmark1 ")))
        name = st.sampled_from(("al", "ls", "cat", "echo"))
        shopt = st.sampled_from(("shopt -s expand_aliases\n", ""))
        after = st.sampled_from(("\n{n} x", "; {n} x", "\n{n} {n}"))
        return st.builds(
            lambda s, n, v, a: Code(f"{s}alias {n}={quoted(v)}" + a.format(n=n)), shopt, name, value, after
        )

    # ---- redirections ----

    @functools.cache  # noqa: B019
    def redirects(self, depth: int) -> st.SearchStrategy[tuple[Code, ...]]:
        one = weighted((2, self.redirect(depth)), (1, self.heredoc(depth)))
        return weighted((3, st.tuples(one)), (1, st.tuples(one, one)))

    @functools.cache  # noqa: B019
    def redirect(self, depth: int) -> st.SearchStrategy[Code]:
        target = st.one_of(st.sampled_from(TARGETS), self.word(depth))
        operators = (">", ">>", "<", "<>", ">|", "&>", "&>>", "2>", "2>>", "3>", "3<", "{fd}>", "1>", "0<")
        return st.one_of(
            st.tuples(st.sampled_from(operators), st.sampled_from(("", " ")), target).map(lambda t: Code("".join(t))),
            st.sampled_from(("2>&1", ">&2", "<&-", ">&-", "3>&1", "<&0")).map(Code),
            self.word(depth).map(lambda w: Code("<<< " + w)),
        )

    @functools.cache  # noqa: B019
    def heredoc(self, depth: int) -> st.SearchStrategy[Code]:
        """`<<E` (its body expanded as in double quotes), `<<'E'`/`<<"E"`/`<<\\E` (literal), `<<-E` (tabs
        stripped); the body follows the end of the line."""
        line = st.one_of(
            self.double_inner(max(depth - 1, 0)),
            st.sampled_from(("$(touch PWN)", "`pwnmark2`", "E x", "'", '"', "\\", "#")),
        )
        body = st.lists(line, max_size=2).map(lambda lines: "".join(text.replace("\n", " ") + "\n" for text in lines))
        opening = st.sampled_from(("<<E", "<<'E'", '<<"E"', "<<\\E", "<<-E", "<< E", "<<-'E'", "<<E "))
        return st.builds(
            lambda o, b: Code(o, b.replace("\nE\n", "\nE \n") + ("\tE\n" if "-" in o else "E\n")), opening, body
        )


def _plain(count: int) -> st.SearchStrategy[Code]:
    """A name from the vocabulary and `count` plain words."""
    parts = [st.sampled_from(NAMES), *(st.sampled_from(LEAVES) for _ in range(count))]
    return st.tuples(*parts).map(lambda words: Code(" ".join(words)))


def _with(code: Code, redirects: tuple[Code, ...]) -> Code:
    for redirect in redirects:
        code = Code(code.text + " " + redirect.text, code.docs + redirect.docs)
    return code


def _joined(first: Code, rest: list[tuple[str, Code]], end: str) -> Code:
    code = first
    for separator, other in rest:
        code = code.then(separator, other)
    return Code(code.text + end, code.docs) if end else code


def for_each_batch(seed: int, examples: int, size: int, body: Callable[[list[str]], None]) -> None:
    """Draws `examples` batches of `size` different command lines with Hypothesis from `seed` (no example
    database, no deadline, no shrinking: the generate phase only) and hands each batch to `body`. (Without
    `unique`, Hypothesis's mutator copies one element of a list over another: most batches repeat a line.)"""

    @with_seed(seed)
    @settings(
        max_examples=examples,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(st.lists(_grammar().case(), min_size=size, max_size=size, unique=True))
    def batch(commands: list[str]) -> None:
        if not failed:
            try:
                body(commands)
            except Exception as error:  # Hypothesis would replay and shrink it: the probe's failure is not
                failed.append(error)  # a property of the line, so it is raised once the run is over

    failed: list[Exception] = []
    with _no_local_constants():
        batch()
    if failed:
        raise failed[0]


@contextlib.contextmanager
def _no_local_constants() -> Iterator[None]:
    """Hypothesis mixes into its draws (one in twenty) constants it reads from the source of every project
    module imported so far: the lines a seed draws would depend on what else the process imported (the
    test files an xdist worker ran before, paicli's modules). Off while drawing, so a seed always draws
    the same lines. (Hypothesis internals: without them, nothing to turn off.)"""
    try:
        from hypothesis.internal.conjecture import providers
        from hypothesis.internal.constants_ast import Constants
    except ImportError:  # pragma: no cover - another Hypothesis
        yield
        return
    original = getattr(providers, "_get_local_constants", None)
    cache = getattr(providers, "CONSTANTS_CACHE", None)
    if original is None or cache is None:  # pragma: no cover
        yield
        return
    none = Constants()
    providers._get_local_constants = lambda: none
    cache.cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = original
        cache.cache.clear()


@functools.cache
def _grammar() -> Grammar:
    """One grammar per process: its strategies are built (and Hypothesis's checks of them run) once."""
    return Grammar()


def sample(count: int, seed: int = 0) -> list[str]:
    """`count` cases drawn with `seed` outside a test (to look at what the grammar makes)."""
    drawn: list[str] = []
    for_each_batch(seed, count, 1, drawn.extend)
    return drawn


__all__ = ["MARKERS", "Code", "Grammar", "for_each_batch", "in_backticks", "quoted", "sample"]
