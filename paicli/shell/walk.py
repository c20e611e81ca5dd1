"""One walk over a parsed command line, for every visitor: the denylist, the classifier, the rule matcher.

The walk calls the visitor for every simple command bash may run, in source order: the commands
written out, those in substitutions, here-document expansions, loop and test words, function bodies,
and the commands and code other programs run on their behalf (`env X=1 rm`, `find -exec`, `xargs`,
`bash -c`, `eval`, code fed to a shell on stdin, ...). A command line is parsed once (parse_script
caches by text); code handed to a program is parsed when the walk reaches it.
"""

from __future__ import annotations

from dataclasses import dataclass

from paicli.shell.options import option_code
from paicli.shell.parse import parse_script
from paicli.shell.programs import assigned, basename, inner, is_shell, stdin_language
from paicli.shell.syntax import (
    NESTED_TOO_DEEPLY,
    Compound,
    HereDoc,
    HereString,
    Inner,
    Literal,
    Pipeline,
    Redirect,
    Script,
    SimpleCommand,
    Substitution,
    Unreadable,
    Word,
)

MAX_DEPTH = 8


@dataclass(frozen=True)
class Site:
    """One simple command as a visitor sees it."""

    command: SimpleCommand
    depth: int  # 0 for the command line itself, +1 per level of substitution or nested code
    pipeline: Pipeline | None = None  # the pipeline it is a stage of (None for a command run by another)
    stage: int = 0
    via: str | None = None  # how it runs when another program runs it ("find -exec", "xargs", "env", ...)
    appended: bool = False  # more arguments are added when it runs (xargs, find -exec ... +)
    fed: bool = False  # its stdin is what another command writes (`tee >(sh)`, `cmd | { sh; }`)

    @property
    def words(self) -> tuple[Word, ...]:
        return self.command.words

    @property
    def previous(self) -> SimpleCommand | Compound | None:
        """The pipeline stage whose output this one reads."""
        return self.pipeline.commands[self.stage - 1] if self.pipeline is not None and self.stage else None


class Visitor:
    """Override what you need. Each method is called before the walk goes below what it reports."""

    def unreadable(self, item: Unreadable, depth: int) -> None:
        """Something the grammar could not read (the classifier fails closed on it)."""

    def script(self, script: Script, depth: int) -> None:
        """A script starts: the command line (depth 0), a substitution, or code another program runs."""

    def command(self, site: Site) -> None:
        """A simple command bash may run."""

    def compound(self, compound: Compound, depth: int) -> None:
        """A subshell, group, loop, conditional, function definition, test or arithmetic command."""

    def redirect(self, redirect: Redirect, depth: int) -> None:
        """A redirection of a simple or compound command."""

    def nested(self, site: Site, found: Inner) -> None:
        """`site` runs `found` (a command or shell code); the walk visits it next."""

    def stdin_code(self, site: Site, language: str, text: str | None) -> None:
        """`site` reads its program in `language` from stdin; `text` is that program when it is known."""


def walk(script: Script, visitor: Visitor, depth: int = 0, *, fed: bool = False) -> None:
    """`fed`: the script's stdin is another command's output (a `>(...)`, a compound in a pipeline)."""
    if depth > MAX_DEPTH:
        visitor.unreadable(Unreadable(script.source, NESTED_TOO_DEEPLY), depth)
        return
    visitor.script(script, depth)
    for item in script.unreadable:
        visitor.unreadable(item, depth)
    for pipeline in script.pipelines:
        for stage, command in enumerate(pipeline.commands):
            if isinstance(command, SimpleCommand):
                _simple(Site(command, depth, pipeline, stage, fed=fed and stage == 0), visitor)
            else:
                reads = bool(command.inputs) or any("<" in r.operator and not r.duplicates for r in command.redirects)
                _compound(command, visitor, depth, fed=stage > 0 or (fed and stage == 0) or reads)


def _simple(site: Site, visitor: Visitor) -> None:
    command, depth = site.command, site.depth
    words = [*command.words, *(w for a in command.assignments for w in a.words)]
    _expansions(words, command.redirects, command.inputs, visitor, depth)
    for redirect in command.redirects:
        visitor.redirect(redirect, depth)
    visitor.command(site)
    settings = [assigned(a.name, a.value) for a in command.assignments]
    runs = [*(s for s in settings if s is not None), *inner(command.words, appended=site.appended)]
    for found in [*runs, *option_code(command.words)]:
        visitor.nested(site, found)
        if found.code is not None:
            walk(parse_script(found.code), visitor, depth + 1)
        elif not found.words:
            continue
        elif depth < MAX_DEPTH:
            nested = SimpleCommand(" ".join(w.text for w in found.words), found.words)
            _simple(Site(nested, depth + 1, via=found.via, appended=found.appended), visitor)
        else:
            visitor.unreadable(Unreadable(command.source, NESTED_TOO_DEEPLY), depth)
    language = stdin_language(command.words)
    if language is not None:
        text = stdin_text(site)
        visitor.stdin_code(site, language, text)
        if text is not None and is_shell(language):
            walk(parse_script(text), visitor, depth + 1)


def _compound(compound: Compound, visitor: Visitor, depth: int, *, fed: bool = False) -> None:
    visitor.compound(compound, depth)
    _expansions(list(compound.words), compound.redirects, compound.inputs, visitor, depth)
    for arithmetic in compound.arithmetic:
        for script in arithmetic.scripts:
            walk(script, visitor, depth + 1)
    for redirect in compound.redirects:
        visitor.redirect(redirect, depth)
    for script in compound.scripts:
        walk(script, visitor, depth, fed=fed)


def _expansions(
    words: list[Word],
    redirects: tuple[Redirect, ...],
    inputs: tuple[HereDoc | HereString, ...],
    visitor: Visitor,
    depth: int,
) -> None:
    """The code that expanding these words, redirection targets and here-documents runs."""
    words = [*words, *(r.target for r in redirects if r.target is not None)]
    words += [i.word for i in inputs if isinstance(i, HereString)]
    for word in words:
        for part in word.parts:
            if isinstance(part, Literal):
                continue
            for script in part.scripts:  # a shell in `>(...)` reads what the command writes there
                walk(script, visitor, depth + 1, fed=isinstance(part, Substitution) and part.kind == ">(")
    for heredoc in inputs:
        if isinstance(heredoc, HereDoc):
            for script in heredoc.scripts:
                walk(script, visitor, depth + 1)


def stdin_text(site: Site) -> str | None:
    """What a command reads on stdin, when the command line says: a here-document or here-string, or the
    output of an `echo`, `printf` or `cat <<EOF` just before it in the pipeline."""
    if site.command.inputs:
        return _input_text(site.command)
    if any("<" in r.operator and not r.duplicates for r in site.command.redirects):
        return None
    previous = site.previous
    return printed(previous) if isinstance(previous, SimpleCommand) else None


def written_file(command: SimpleCommand) -> tuple[str, str] | None:
    """`echo TEXT > F`, `printf ... > F`, `cat <<EOF > F`: the file a command writes, and what it writes."""
    targets = [r.target for r in command.redirects if r.writes and r.fd in (None, "1") and r.target is not None]
    if not targets or not targets[-1].static:
        return None
    text = printed(command)
    return (targets[-1].text, text) if text is not None else None


def printed(command: SimpleCommand) -> str | None:
    """What `echo`, `printf` or `cat <<EOF` prints (roughly: for code that reads it, not for display)."""
    if not command.words:
        return None
    name = basename(command.words[0].text)
    args = [w.text for w in command.words[1:]]
    if name == "echo":
        while args and args[0] in ("-n", "-e", "-E", "-ne", "-en"):
            args = args[1:]
        return " ".join(args) + "\n"
    if name == "printf" and args:
        return "\n".join(args[1:] or args[:1])
    if name == "cat" and not args and command.inputs:
        return _input_text(command)
    return None


def _input_text(command: SimpleCommand) -> str:
    last = command.inputs[-1]
    return last.body if isinstance(last, HereDoc) else last.word.text + "\n"
