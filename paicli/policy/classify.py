"""What a shell command does, as far as approvals care: SAFE, ASK, OPAQUE or DENY.

SAFE    every simple command is on the read-only list, with arguments that stay inside the workspace
        (`ls`, `cat src/a.py`, `grep -rn TODO .`, `git status`, `find . -name '*.py'`, `sed -n 1,20p f`)
ASK     it changes something, runs project code, or reads outside the workspace: needs a yes
OPAQUE  paicli cannot tell what would run (`$(echo rm) -rf /`, `$'\\x72m'`, `$cmd`, open quotes, code fed
        to a shell or interpreter on stdin, `git -c core.pager=...`): fails closed, so it needs a yes in
        every mode, `yolo` included
DENY    on the hard denylist (paicli.tools.denylist): refused in every mode

The command is parsed once (paicli.shell) and walked as bash would run it: substitutions, here-document
expansions, code handed to `bash -c`/`eval` and the commands of `find -exec`/`xargs`/wrappers are
classified as commands of their own. Test runners and interpreters (`pytest`, `python app.py`, `make`)
run the project's code, which can do anything, so they ASK; allow them with a rule (`allow = ["pytest"]`)
or the "always" answer.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from paicli.policy.always_prefix import command_prefix, is_interpreter_name
from paicli.policy.checks import (
    HARMLESS,
    Reasons,
    check_cd,
    check_printf,
    check_reader,
    check_test,
    check_variable_names,
    unknowable_arguments,
)
from paicli.policy.destructive import destructive_reason
from paicli.policy.git_reader import check_git, dynamic_global_option
from paicli.policy.overwrites import lost_by, lost_by_redirect
from paicli.policy.paths import HARMLESS_FILES, OutsideRead, Places, option_like_glob
from paicli.policy.readers import READERS
from paicli.policy.risk import Classification, Finding, Risk
from paicli.shell.builtins import starts_program
from paicli.shell.options import stdin_file
from paicli.shell.parse import parse_script
from paicli.shell.programs import program_name, script_file
from paicli.shell.syntax import Arithmetic, Compound, Inner, Kind, Redirect, SimpleCommand, Unreadable, Word
from paicli.shell.walk import Site, Visitor, walk, written_file
from paicli.tools.denylist import dangerous_reason
from paicli.tools.shims import command_search_path

__all__ = ["Classification", "Finding", "Risk", "classify_command", "normalise_name"]

# Shell builtins (and keywords) bash never looks up on PATH.
_BUILTINS = frozenset(
    {
        "cd",
        "pushd",
        "popd",
        "dirs",
        "echo",
        "printf",
        "test",
        "[",
        "pwd",
        "true",
        "false",
        ":",
        "type",
        "time",
        "read",
        "export",
        "declare",
        "local",
        "unset",
        "set",
        "shift",
        "exit",
        "return",
        "eval",
        "exec",
        "source",
        ".",
        "alias",
        "hash",
        "let",
        "trap",
        "wait",
    }
)
# Builtins whose arguments name variables: bash evaluates a subscript in a name (`a[$(cmd)]`) as arithmetic.
_ASSIGNS_BY_NAME = frozenset(
    {
        "declare",
        "typeset",
        "local",
        "export",
        "readonly",
        "unset",
        "read",
        "mapfile",
        "readarray",
        "let",
        "wait",
        "getopts",
    }
)
_RUN_BUILTINS = frozenset({"command", "builtin"})  # wrappers that run a builtin of the name, not a program
_RUNS_PROJECT_CODE = {"pytest", "tox", "nox", "make", "npm", "cargo", "go"}


def classify_command(command: str, workspace: Path, *, search_path: str | None = None) -> Classification:
    """Classify `command` as run with `bash -c` in `workspace` (programs found on `search_path`, by default
    the PATH execute_command gives it). Never raises: a bug here is OPAQUE."""
    root = Path(os.path.realpath(workspace))
    denied = dangerous_reason(command, workspace=root)
    try:
        path = command_search_path() if search_path is None else search_path
        classifier = _Classifier(Places(root), programs=_ProgramLookup(path, root))
        walk(parse_script(command), classifier)
        found = classifier.result()
    except Exception as error:  # fail closed, never open
        reason = f"the command could not be classified ({type(error).__name__})"
        found = Classification(Risk.OPAQUE, reason, (Finding(Risk.OPAQUE, reason),))
    if denied:
        return Classification(Risk.DENY, denied, (Finding(Risk.DENY, denied),), programs=found.programs)
    return found


def normalise_name(word: str) -> str:
    """`/usr/bin/rm` → `rm` (a system program); `./rm` and `bin/rm` stay as written (a project file)."""
    folder, _, name = word.rpartition("/")
    return name if folder in {"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin"} and name else word


@dataclass
class _Classifier(Visitor):
    places: Places
    programs: _ProgramLookup | None = None  # where a program name leads (a program the model wrote?)
    findings: list[Finding] = field(default_factory=list)
    commands: list[tuple[str, ...]] = field(default_factory=list)
    written: set[str] = field(default_factory=set)  # files echo/printf/cat wrote earlier in the line
    started: list[str] = field(default_factory=list)  # what each command starts (see Classification.programs)

    def result(self) -> Classification:
        started = tuple(dict.fromkeys(self.started))
        if not self.findings:
            return Classification(Risk.SAFE, commands=tuple(self.commands), programs=started)
        worst = max(f.risk for f in self.findings)
        worst_found = [f for f in self.findings if f.risk is worst]  # what destroys work says it first
        reason = next((f.reason for f in worst_found if f.destructive), worst_found[0].reason)
        return Classification(worst, reason, tuple(self.findings), tuple(self.commands), started)

    def note(self, risk: Risk, reason: str, words: tuple[str, ...] | None = None, *, exact: bool = False) -> None:
        prefix = command_prefix(words) if words and risk is Risk.ASK and not exact else None
        self.findings.append(Finding(risk, reason, words, prefix, reads_outside=isinstance(reason, OutsideRead)))

    # ---- what the walk reports ----

    def unreadable(self, item: Unreadable, depth: int) -> None:
        self.note(Risk.OPAQUE, item.reason)

    def nested(self, site: Site, found: Inner) -> None:
        if found.human is not None:
            self.note(Risk.OPAQUE, found.human)
        elif found.code is not None and found.dynamic:
            self.note(Risk.OPAQUE, f"the code that {found.via} runs is only known when it runs")

    def stdin_code(self, site: Site, language: str, text: str | None) -> None:
        redirected = any("<" in r.operator for r in site.command.redirects)
        if site.fed or site.stage > 0 or site.command.inputs or redirected:
            self.note(Risk.OPAQUE, f"{language} runs code that it reads from stdin")

    def compound(self, compound: Compound, depth: int) -> None:
        self._arithmetic([*compound.arithmetic, *_arithmetic_parts(compound.words)])
        if compound.kind is Kind.TEST and not compound.source.startswith("[["):
            for reason in check_test(compound.words):
                self.note(*reason)

    def redirect(self, redirect: Redirect, depth: int) -> None:
        target = redirect.target
        if target is None or redirect.duplicates:
            return
        if not target.static:
            self.note(Risk.ASK, f"it redirects to {target.text!r}, which is only known when it runs")
        elif redirect.writes or redirect.operator == "<>":
            if target.text in HARMLESS_FILES:
                return
            if redirect.operator in (">", ">|", "&>") and (lost := lost_by_redirect(target, self.places)):
                self.findings.append(Finding(Risk.ASK, lost, destructive=True))
            else:
                self.note(Risk.ASK, f"it writes to {target.text} (shell redirection)")
        elif reason := self.places.outside(target):
            self.note(Risk.ASK, reason)

    def command(self, site: Site) -> None:
        command = site.command
        self._arithmetic(_arithmetic_parts([*command.words, *(w for a in command.assignments for w in a.words)]))
        if not command.words:
            if command.assignments:
                names = ", ".join(a.name for a in command.assignments)
                self.note(Risk.ASK, f"it sets shell variables ({names}) that later commands use")
            return
        first = command.words[0]
        if not first.static or first.glob or first.tilde:
            self.note(Risk.OPAQUE, f"the command name {first.text!r} is only known when it runs")
            return
        normalised = (program_name(first), *(w.text for w in command.words[1:]))
        self.commands.append(normalised)
        # `env echo`, `exec printf`: a wrapper starts the program of that name, never the builtin
        if starts_program(normalised[0]) or (site.via is not None and site.via not in _RUN_BUILTINS):
            self.started.append(normalised[0])
        self._written(command)
        lost = lost_by(normalised[0], command.words[1:], self.places)
        if destroys := lost or destructive_reason(normalised):
            prefix = None if lost else command_prefix(normalised)  # "always" covers this exact text only
            self.findings.append(Finding(Risk.ASK, destroys, normalised, prefix, destructive=True))
        if command.assignments:
            # Rules must name the variables too (`CI=1 pytest`): `PATH=... ls` is not `ls`.
            assigned = tuple(f"{a.name}={a.value.text if a.value else ''}" for a in command.assignments)
            names = ", ".join(a.name for a in command.assignments)
            reason = f"it sets environment variables ({names}) for {normalised[0]}"
            self.note(Risk.ASK, reason, (*assigned, *normalised), exact=True)
            return
        if site.appended:
            self.note(Risk.ASK, f"{normalised[0]} gets more arguments from {site.via} when it runs", normalised)
        for risk, reason in self._check(normalised[0], command.words[1:]):
            self.note(risk, reason, normalised if risk is Risk.ASK else None)

    def _written(self, command: SimpleCommand) -> None:
        """`echo CODE > s; sh s` feeds code to a shell as surely as `sh <<< CODE` does."""
        if written := written_file(command):
            self.written.add(os.path.normpath(written[0]))
        script = script_file(command.words)
        if script is not None and stdin_file(script):
            self.note(Risk.OPAQUE, f"it runs a script only known when it runs ({script.text})")
        elif script is not None and os.path.normpath(script.text) in self.written:
            self.note(Risk.OPAQUE, f"it runs {script.text}, which this command line has just written")

    def _check(self, name: str, args: tuple[Word, ...]) -> Reasons:
        looked_up = self.programs is not None and name not in _BUILTINS and "/" not in name
        if looked_up and self.programs and (untrusted := self.programs.untrusted(name)):
            return [(Risk.ASK, untrusted)]
        if name in _ASSIGNS_BY_NAME:
            return check_variable_names(name, args) or [(Risk.ASK, _why_not_read_only(name))]
        if name == "time" and args and args[0].text.startswith("-") and args[0].text != "-p":
            return [(Risk.ASK, f"time {args[0].text} can write a file")]
        if name == "rm" and _recursive(args) and any(not w.static for w in args if not w.text.startswith("-")):
            return [(Risk.OPAQUE, "rm -r of a path that is only known when it runs")]
        if name in ("cd", "pushd"):
            return check_cd(args, self.places)
        if name == "hash" and any(w.text.startswith("-") and "p" in w.text for w in _options(args)):
            return [(Risk.OPAQUE, "hash -p makes a command name start another program")]
        if name == "enable" and args:
            return [(Risk.OPAQUE, "enable changes which commands are builtins (or loads new ones)")]
        if name in HARMLESS:
            return []
        if name == "printf":
            return check_printf(args)
        if name in ("test", "["):
            return check_test(args)
        if name == "git":
            if reason := dynamic_global_option(args):
                return [(Risk.OPAQUE, reason)]
            if reasons := unknowable_arguments(name, args):
                return reasons
            found = check_git(args, self.places.root, self.places.only_root)
            if found is not None:
                return [(Risk.OPAQUE if found[1] else Risk.ASK, found[0])]
            return self._git_paths(args)
        if name in READERS:
            return check_reader(name, args, self.places)
        return [(Risk.ASK, _why_not_read_only(name))]

    def _git_paths(self, args: tuple[Word, ...]) -> Reasons:
        for word in args[1:]:
            if word.text.startswith("-") or option_like_glob(word):
                continue
            if ("/" in word.text or word.text.startswith(("~", ".."))) and (reason := self.places.outside(word)):
                return [(Risk.ASK, reason)]
        return []

    def _arithmetic(self, found: list[Arithmetic]) -> None:
        for arithmetic in found:
            if arithmetic.names or arithmetic.scripts:
                why = "evaluates values only known when it runs as arithmetic, which can run code"
                self.note(Risk.OPAQUE, f"{arithmetic.source} {why}")


@dataclass(frozen=True)
class _ProgramLookup:
    """Finds a program name on the search path as bash will. A workspace folder on PATH (an activated
    `.venv/bin`) is harmless for the names it does not hold: the file tools refuse to write into it (the
    guard) and a command that writes is never SAFE, so nothing can appear there unapproved."""

    search_path: str
    root: Path
    seen: dict[str, str | None] = field(default_factory=dict)  # a long pipeline names the same programs

    def untrusted(self, name: str) -> str | None:
        """Why `name` may run a program the model wrote; None when it runs one from outside the workspace
        (or none at all)."""
        if name not in self.seen:
            self.seen[name] = self._untrusted(name)
        return self.seen[name]

    def _untrusted(self, name: str) -> str | None:
        for entry in self.search_path.split(os.pathsep):
            if not entry or not os.path.isabs(entry):
                shown = entry or "(empty)"
                return f"PATH holds the relative folder {shown!r}, so {name} may be a program the model wrote"
            folder = Path(os.path.realpath(entry))
            candidate = folder / name
            if folder.is_relative_to(self.root):
                if os.path.lexists(candidate):
                    return f"PATH holds {entry}, a workspace folder, whose {name} may be a program the model wrote"
            elif candidate.is_file() and os.access(candidate, os.X_OK):
                return None
        return None


def _options(args: tuple[Word, ...]) -> list[Word]:
    """A builtin's options: the words before the first operand or `--`."""
    options = []
    for word in args:
        if word.text == "--" or not word.text.startswith("-") or word.text == "-":
            break
        options.append(word)
    return options


def _arithmetic_parts(words: list[Word] | tuple[Word, ...]) -> list[Arithmetic]:
    return [p for w in words for p in w.parts if isinstance(p, Arithmetic)]


def _recursive(args: tuple[Word, ...]) -> bool:
    return any(
        w.text == "--recursive"
        or (w.text.startswith("-") and not w.text.startswith("--") and ("r" in w.text or "R" in w.text))
        for w in args
    )


def _why_not_read_only(name: str) -> str:
    if is_interpreter_name(name) or name in _RUNS_PROJECT_CODE:
        return f"{name} runs the project's code, which can do anything"
    if "/" in name:
        return f"{name} runs a program from the workspace"
    return f"{name} is not on the list of read-only commands"
