"""What a shell command does, as far as approvals care: SAFE, ASK, OPAQUE or DENY.

SAFE    every simple command is on the read-only list, with arguments that stay inside the workspace
        (`ls`, `cat src/a.py`, `grep -rn TODO .`, `git status`, `find . -name '*.py'`, `sed -n 1,20p f`)
ASK     it changes something, runs project code, or reads outside the workspace: needs a yes
OPAQUE  paicli cannot tell what would run (`$(echo rm) -rf /`, `$'\\x72m'`, `$cmd`, open quotes):
        fails closed, so it needs a yes in every mode, `yolo` included
DENY    on the hard denylist (paicli.tools.commands): refused in every mode

The command is read the way bash reads it (paicli.tools.shell_words): here-documents, `$(...)`,
backticks and `<(...)` are classified as commands of their own; `;`, `&&`, `||`, `|`, `&` and
newlines separate commands; quotes are removed before names are looked up (`r"m"` is `rm`).
Test runners and interpreters (`pytest`, `python app.py`, `make`) run the project's code, which can do
anything, so they ASK; allow them with a rule (`allow = ["pytest"]`) or the "always" answer.
"""

from __future__ import annotations

import enum
import glob
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from paicli.tools.commands import basename, dangerous_reason, is_interpreter, runs_stdin, shell_code, strip_wrappers
from paicli.tools.shell_words import (
    PLACEHOLDER,
    SimpleCommand,
    extract_substitutions,
    join_continued_lines,
    pipelines,
    restore,
    split_heredocs,
    tokenize,
)

_MAX_DEPTH = 8
_MAX_GLOB_MATCHES = 2000
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=.*", re.DOTALL)
_ANSI_C_QUOTE = re.compile(r"\$['\"]")
_SYSTEM_BIN = {"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin"}
_FD = re.compile(r"[0-9]+-?|-")
_KEYWORDS = {"if", "then", "elif", "else", "fi", "while", "until", "do", "done", "!", "{", "}", "time"}
_HARMLESS_FILES = {"/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr"}

# Commands that only print: no path checks on their arguments.
_PRINTERS = {"echo", "printf", "true", "false", "pwd", "whoami", "id", "uname", "sleep", "which", "type",
             "test", "[", "date", "printenv", "nproc", "popd", "dirs"}  # fmt: skip
# Read-only commands whose operands are files: each must resolve inside the workspace.
_READERS = {"ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "find", "file", "stat", "du",
            "tree", "basename", "dirname", "realpath", "readlink", "cut", "tr", "diff", "cmp", "nl", "sort",
            "uniq", "sed", "git", "jq", "md5sum", "sha1sum", "sha256sum", "column", "df"}  # fmt: skip
_PATTERN_FIRST = {"grep", "egrep", "fgrep", "rg"}
_PATTERN_OPTIONS = {"-e", "-f", "--regexp", "--file"}
# Options that make an otherwise read-only command write, run programs or follow links out.
_FIND_UNSAFE = ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls", "-L",
                "-follow")  # fmt: skip
_UNSAFE_OPTIONS: dict[str, tuple[str, ...]] = {
    "find": _FIND_UNSAFE,
    "rg": ("--pre", "--pre-glob", "-z", "--search-zip", "-L", "--follow", "--hostname-bin"),
    "grep": ("-R", "--dereference-recursive"),
    "sort": ("-o", "--output", "--compress-program"),
    "date": ("-s", "--set"),
    "tree": ("-o", "-R"),
    "file": ("-C", "--compile"),
}
_UNSAFE_OPTIONS["egrep"] = _UNSAFE_OPTIONS["fgrep"] = _UNSAFE_OPTIONS["grep"]
_GIT_READ_ONLY = {"status", "diff", "log", "show", "rev-parse", "ls-files", "blame", "describe", "shortlog",
                  "branch", "tag", "remote"}  # fmt: skip
_GIT_LISTING_OPTIONS = {"-a", "-r", "-v", "-vv", "-l", "--list", "--all", "--remotes", "--show-current",
                        "--verbose", "--no-color", "--color", "-n"}  # fmt: skip
_GIT_UNSAFE_OPTIONS = ("--output", "--ext-diff", "-o", "--exec", "--upload-pack", "--run")
_SED_PRINT_SCRIPT = re.compile(r"(?:[0-9]+|\$)(?:,(?:[0-9]+|\$))?p|/[^/]*/p")
# Commands whose first argument names what they do ("git commit", "npm test"): the unit of "always".
_SUBCOMMAND_TOOLS = {"git", "npm", "npx", "pnpm", "yarn", "bun", "cargo", "go", "pip", "pip3", "uv", "poetry",
                     "docker", "podman", "kubectl", "make", "dotnet", "gradle", "mvn", "bundle", "rake", "brew", "apt",
                     "apt-get", "conda", "terraform", "helm", "systemctl", "gh", "hatch", "tox", "nox"}  # fmt: skip
_INTERPRETER = re.compile(r"(?:python|pypy)[0-9.]*|perl|ruby|node|php|deno|bash|sh|zsh|dash")


class Risk(enum.IntEnum):
    SAFE = 0
    ASK = 1
    OPAQUE = 2
    DENY = 3


@dataclass(frozen=True)
class Finding:
    """One reason a command is not SAFE."""

    risk: Risk
    reason: str
    words: tuple[str, ...] | None = None  # the simple command it is about (name normalised); None: not one
    prefix: str | None = None  # what "always" would allow ("git commit", "rm"); None: only this exact text


@dataclass(frozen=True)
class Classification:
    risk: Risk
    reason: str = ""  # the reason of the first finding with the highest risk
    findings: tuple[Finding, ...] = ()
    commands: tuple[tuple[str, ...], ...] = ()  # every simple command seen, wrappers kept, names normalised

    @property
    def asks(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.risk is Risk.ASK)


def classify_command(command: str, workspace: Path) -> Classification:
    """Classify `command` as run with `bash -c` in `workspace`. Never raises: a bug here is OPAQUE."""
    root = Path(os.path.realpath(workspace))
    if reason := dangerous_reason(command, workspace=root):
        return Classification(Risk.DENY, reason, (Finding(Risk.DENY, reason),))
    try:
        return _Classifier(root).run(command)
    except Exception as error:  # fail closed, never open
        reason = f"the command could not be classified ({type(error).__name__})"
        return Classification(Risk.OPAQUE, reason, (Finding(Risk.OPAQUE, reason),))


def normalise_name(word: str) -> str:
    """`/usr/bin/rm` → `rm` (a system program); `./rm` and `bin/rm` stay as written (a project file)."""
    folder, _, name = word.rpartition("/")
    return name if folder in _SYSTEM_BIN and name else word


def command_prefix(words: tuple[str, ...]) -> str | None:
    """What the "always" answer allows for this simple command; None when only the exact text is safe."""
    name, args = words[0], words[1:]
    operands = [a for a in args if not a.startswith("-")]
    if name in _SUBCOMMAND_TOOLS:
        return f"{name} {operands[0]}" if operands else name
    if _INTERPRETER.fullmatch(name):
        if len(args) >= 2 and args[0] == "-m":
            return f"{name} -m {args[1]}"
        if args and not args[0].startswith("-"):
            return f"{name} {args[0]}"
        return None  # `python -c CODE`, a bare REPL: the code is the command
    return name


@dataclass
class _Classifier:
    root: Path
    cwds: list[Path] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    commands: list[tuple[str, ...]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.cwds = [self.root]

    def run(self, command: str) -> Classification:
        self.visit(command, depth=0)
        if not self.findings:
            return Classification(Risk.SAFE, commands=tuple(self.commands))
        worst = max(f.risk for f in self.findings)
        reason = next(f.reason for f in self.findings if f.risk is worst)
        return Classification(worst, reason, tuple(self.findings), tuple(self.commands))

    def note(self, risk: Risk, reason: str, words: tuple[str, ...] | None = None, *, exact: bool = False) -> None:
        prefix = command_prefix(words) if words and risk is Risk.ASK and not exact else None
        self.findings.append(Finding(risk, reason, words, prefix))

    def visit(self, text: str, depth: int) -> None:
        if depth > _MAX_DEPTH:
            self.note(Risk.OPAQUE, "commands nested too deeply to classify")
            return
        text, heredocs = split_heredocs(join_continued_lines(text))
        for doc in heredocs:
            for sub in extract_substitutions(doc.body, quotes=False)[1] if doc.expands else []:
                self.visit(sub, depth + 1)
        if _ANSI_C_QUOTE.search(text):
            self.note(Risk.OPAQUE, "it uses $'...' or $\"...\" quoting, which paicli does not decode")
        flat, subs = extract_substitutions(text)
        for sub in subs:
            self.visit(sub, depth + 1)
        try:
            tokenize(flat)
        except ValueError:
            self.note(Risk.OPAQUE, "its quotes are not balanced, so paicli cannot tell what would run")
            return
        for pipeline in pipelines(flat):
            for index, simple in enumerate(pipeline):
                self.simple(simple, subs, depth)
                words = strip_wrappers(simple.words)
                if index and words and is_interpreter(basename(words[0])) and runs_stdin(words[1:]):
                    self.note(Risk.OPAQUE, f"{basename(words[0])} runs code that it reads from the pipe")

    def simple(self, command: SimpleCommand, subs: list[str], depth: int) -> None:
        for operator, target in command.redirects:
            self.redirect(operator, target)
        words = command.words
        while words and words[0] in _KEYWORDS:  # `then rm ...`, `do rm ...`: the command follows the keyword
            words = words[1:]
        assignments = 0
        while assignments < len(words) and _ASSIGNMENT.fullmatch(words[assignments]):
            assignments += 1
        if assignments == len(words):
            if words:
                names = ", ".join(w.split("=", 1)[0].rstrip("+") for w in words)
                self.note(Risk.ASK, f"it sets shell variables ({names}) that later commands use")
            return
        first = words[assignments]
        if PLACEHOLDER.search(first) or any(c in first for c in "$*?[{~`"):
            self.note(Risk.OPAQUE, f"the command name {restore(first, subs)!r} is only known when it runs")
            return
        normalised = (normalise_name(first), *words[assignments + 1 :])
        self.commands.append(normalised)
        if assignments:
            # Rules must name the variables too (`CI=1 pytest`): `PATH=... ls` is not `ls`.
            names = ", ".join(w.split("=", 1)[0].rstrip("+") for w in words[:assignments])
            reason = f"it sets environment variables ({names}) for {normalised[0]}"
            self.note(Risk.ASK, reason, (*words[:assignments], *normalised), exact=True)
            return
        name, args = normalised[0], list(normalised[1:])
        if name == "rm" and _recursive(args) and any(_runtime_only(a) for a in args if not a.startswith("-")):
            self.note(Risk.OPAQUE, "rm -r of a path that is only known when it runs")
        for code in shell_code(name, args):  # `bash -c CODE`: its commands count too (deny rules see them)
            self.visit(restore(code, subs), depth + 1)
        if name in ("cd", "pushd"):
            self.change_folder(normalised)
        elif name in _PRINTERS:
            if reason := self.unsafe_option(name, args):
                self.note(Risk.ASK, reason, normalised)
        elif name in _READERS:
            if reason := self.unsafe_option(name, args) or self.outside_operand(name, args):
                self.note(Risk.ASK, reason, normalised)
        else:
            self.note(Risk.ASK, _why_not_read_only(name), normalised)

    def redirect(self, operator: str, target: str) -> None:
        if operator in ("<<", "<<-", "<<<"):
            return  # a here-document delimiter or here-string: data
        if operator in (">&", "<&") and _FD.fullmatch(target):
            return  # `2>&1`: duplicates a descriptor
        if PLACEHOLDER.search(target) or "$" in target:
            self.note(Risk.ASK, f"it redirects to {target!r}, which is only known when it runs")
        elif ">" in operator:
            if target not in _HARMLESS_FILES:
                self.note(Risk.ASK, f"it writes to {target} (shell redirection)")
        elif reason := self.outside_path(target):
            self.note(Risk.ASK, reason)

    def change_folder(self, words: tuple[str, ...]) -> None:
        targets = [w for w in words[1:] if w != "--"]
        if len(targets) != 1 or targets[0] == "-" or targets[0].startswith("-"):
            self.note(Risk.ASK, f"{' '.join(words)} changes to a folder paicli cannot check", words)
            return
        if reason := self.outside_path(targets[0]):
            self.note(Risk.ASK, reason, words)
            return
        self.cwds += [Path(os.path.realpath(cwd / targets[0])) for cwd in self.cwds]

    def unsafe_option(self, name: str, args: list[str]) -> str | None:
        for arg in args:
            if arg == "--":
                break
            if banned := _banned_option(name, arg):
                return f"{name} {banned} can write files or run programs"
        if name == "git":
            return _git_unsafe(args)
        if name == "sed":
            return _sed_unsafe(args)
        if name == "uniq" and len([a for a in args if not a.startswith("-")]) > 1:
            return "uniq with two file names writes the second one"
        return None

    def outside_operand(self, name: str, args: list[str]) -> str | None:
        """Why an operand of this reader leaves the workspace, or None."""
        skip_first = name in _PATTERN_FIRST and not any(a.split("=", 1)[0] in _PATTERN_OPTIONS for a in args)
        skip_first = skip_first or name == "sed"
        options_done = False
        for arg in args[1:] if name == "git" else args:
            if not options_done and arg == "--":
                options_done = True
                continue
            if not options_done and arg.startswith("-") and arg != "-":
                if "=" in arg:
                    value = arg.split("=", 1)[1]
                    if any(c in value for c in "/~$") and (reason := self.outside_path(value)):
                        return reason
                elif any(c in arg for c in "/~$") or PLACEHOLDER.search(arg):
                    return f"the option {arg!r} may name a path outside the workspace"
                continue
            if skip_first:
                skip_first = False
                continue
            if reason := self.outside_path(arg):
                return reason
        return None

    def outside_path(self, arg: str) -> str | None:
        """Why `arg`, used as a path from any folder the command may be in, leaves the workspace."""
        if arg == "-" or arg in _HARMLESS_FILES:
            return None
        if PLACEHOLDER.search(arg) or "$" in arg or "`" in arg:
            return f"the path {arg!r} is only known when it runs"
        if arg.startswith("~"):
            return f"{arg} is in a home folder, outside the workspace"
        if "{" in arg:
            return f"{arg!r} uses brace expansion, which paicli does not expand"
        for cwd in self.cwds:
            try:
                paths = self.expand(cwd, arg)
            except _TooManyMatches:
                return f"{arg} matches too many files to check"
            for path in paths:
                resolved = Path(os.path.realpath(path))
                if not resolved.is_relative_to(self.root):
                    return f"it reads {arg}, which is outside the workspace"
        return None

    def expand(self, cwd: Path, arg: str) -> list[Path]:
        if not any(c in arg for c in "*?["):
            return [cwd / arg]
        matches = glob.glob(arg, root_dir=cwd)
        if len(matches) > _MAX_GLOB_MATCHES:
            raise _TooManyMatches(arg)
        return [cwd / m for m in matches] or [cwd / arg]


class _TooManyMatches(Exception):
    pass


def _banned_option(name: str, arg: str) -> str | None:
    """The banned option `arg` stands for: exact, `--opt=value`, a GNU abbreviation (`--out` for
    `--output`) or one letter of a short-option cluster (`-uo` holds `-o`)."""
    banned = _UNSAFE_OPTIONS.get(name, ())
    option = arg.split("=", 1)[0]
    for candidate in banned:
        if option == candidate:
            return candidate
        if option.startswith("--") and len(option) > 3 and candidate.startswith(option):
            return candidate
        clustered = name != "find" and len(candidate) == 2 and not option.startswith("--")
        if clustered and option.startswith("-") and candidate[1] in option[1:]:
            return candidate
    return None


def _git_unsafe(args: list[str]) -> str | None:
    if not args or args == ["--no-pager"]:
        return None
    rest = args[1:] if args[0] == "--no-pager" else args
    sub = rest[0] if rest else ""
    if sub.startswith("-"):
        return "git with global options (-c, -C, ...) can change what git runs"
    if sub not in _GIT_READ_ONLY:
        return f"git {sub} changes the repository or talks to a remote"
    options = rest[1:]
    for option in options:
        if option.split("=", 1)[0] in _GIT_UNSAFE_OPTIONS:
            return f"git {sub} {option.split('=', 1)[0]} can write files or run programs"
    if sub in {"branch", "tag", "remote"} and any(o not in _GIT_LISTING_OPTIONS for o in options):
        return f"git {sub} with these arguments changes the repository"
    return None


def _sed_unsafe(args: list[str]) -> str | None:
    """Only `sed -n 'N,Mp' FILE...` (printing lines) counts as reading."""
    options = [a for a in args if a.startswith("-")]
    operands = [a for a in args if not a.startswith("-")]
    if options != ["-n"] or not operands or not _SED_PRINT_SCRIPT.fullmatch(operands[0]):
        return "sed can edit files in place or run commands; only `sed -n 'N,Mp' FILE` counts as reading"
    return None


def _recursive(args: list[str]) -> bool:
    return "--recursive" in args or any(a.startswith("-") and not a.startswith("--") and a[1:] and
                                        ("r" in a or "R" in a) for a in args)  # fmt: skip


def _runtime_only(word: str) -> bool:
    return bool(PLACEHOLDER.search(word)) or "$" in word or "`" in word


def _why_not_read_only(name: str) -> str:
    if _INTERPRETER.fullmatch(name) or name in {"pytest", "tox", "nox", "make", "npm", "cargo", "go"}:
        return f"{name} runs the project's code, which can do anything"
    if "/" in name:
        return f"{name} runs a program from the workspace"
    return f"{name} is not on the list of read-only commands"
