"""The hard denylist: shell commands refused in every approval mode, `yolo` included.

`dangerous_reason` looks at what bash would run, not at the text: the command is split on `;`, `&&`,
`||`, `|`, `&` and newlines, quotes are removed (`r"m"` is rm), wrappers are skipped (`env`, `nohup`,
`timeout 5`, ...), and the code inside `bash -c '...'`, `eval`, `$(...)`, backticks and `<(...)` is
checked too, and so is the `$(...)` inside an unquoted here-document. Quoted text is data:
`echo 'rm -rf /'` is fine.

It errs on the side of refusing: `#` comments are not recognised (`a#b` is a word in bash, and
telling the two apart is not worth a bypass), `rm -rf *` is refused even after a `cd`, and a quoted
`;` counts as a separator. Text that shlex cannot split (unbalanced quotes) is not dangerous by itself
here; the approval layer fails closed on it. Anything subtler (scripts, `find -delete`, aliases) is the
approval policy's business, not this list's.
"""

from __future__ import annotations

import itertools
import os
import re
from pathlib import Path

from paicli.tools.shell_words import (
    PLACEHOLDER,
    SimpleCommand,
    extract_substitutions,
    join_continued_lines,
    pipelines,
    placeholders,
    restore,
    split_heredocs,
    substitution,
    tokenize,
)

_MAX_DEPTH = 8

_PRIVILEGE = {"sudo", "doas", "su", "pkexec", "run0"}
_POWER = {"shutdown", "reboot", "halt", "poweroff"}
_SYSTEMCTL_POWER = {"poweroff", "reboot", "halt", "kexec"}
_FETCHERS = {"curl", "wget", "fetch"}
_SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "mksh", "fish"}
_INTERPRETER = re.compile(r"(?:python|pypy)[0-9.]*|perl|ruby|node|php|bun|deno")
_CODE_RUNNERS = {"eval", "source", "."}
_WRAPPERS = {
    "env", "command", "builtin", "exec", "nohup", "setsid", "time", "nice", "ionice", "timeout",
    "stdbuf", "xargs", "unbuffer", "then", "do", "else", "elif", "if", "while", "until", "!", "{",
}  # fmt: skip
_WRAPPER_OPTIONS_WITH_VALUE = {"-u", "-C", "-n", "-s", "-k", "-I", "-P", "-L", "-c"}
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=.*", re.DOTALL)
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?[smhd]?")
_BARE_VARIABLE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")
_BLOCK_DEVICE = re.compile(r"/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|dm-|mapper/|md|loop|mem$|kmem$|port$)")
_HARMLESS_DEVICES = {"null", "zero", "stdout", "stderr", "tty", "full", "random", "urandom"}
_NAME = r"[^\s(){}|;&<>]{1,64}"
_SAME_NAME = r"(?:(?P=a)|(?P=b))"
# A function that pipes itself into itself: `:(){ :|:& };:`, `function f { f | f & }`.
_FORK_BOMB = re.compile(
    rf"(?:function\s+(?P<a>{_NAME})\s*(?:\(\s*\))?|(?P<b>{_NAME})\s*\(\s*\))"
    rf"\s*\{{[^}}]{{0,200}}?{_SAME_NAME}\s*\|\s*&?\s*{_SAME_NAME}"
)


def dangerous_reason(command: str, *, workspace: Path | None = None) -> str | None:
    """Why `command` is on the hard denylist, or None. Never raises.

    `workspace`, when given, also protects the workspace folder and its ancestors by absolute path.
    """
    root = Path(os.path.realpath(workspace)) if workspace is not None else None
    try:
        return _Checker(root).check(command, depth=0)
    except Exception as error:  # a bug here must refuse, not let the command through
        return f"the command could not be checked ({type(error).__name__})"


class _Checker:
    def __init__(self, workspace: Path | None) -> None:
        self.workspace = workspace

    def check(self, text: str, depth: int) -> str | None:
        if depth > _MAX_DEPTH:
            return "commands nested too deeply to check"
        if _FORK_BOMB.search(text):
            return "a fork bomb"
        text, heredocs = split_heredocs(join_continued_lines(text))
        for doc in heredocs:
            for sub in extract_substitutions(doc.body, quotes=False)[1] if doc.expands else []:
                if reason := self.check(sub, depth + 1):
                    return reason
        flat, subs = extract_substitutions(text)
        for sub in subs:
            if reason := self.check(sub, depth + 1):
                return reason
        for pipeline in pipelines(flat):
            if reason := self._check_pipeline(pipeline, subs, depth):
                return reason
        return None

    def _check_pipeline(self, pipeline: list[SimpleCommand], subs: list[str], depth: int) -> str | None:
        for command in pipeline:
            for operator, target in command.redirects:
                if ">" in operator and _BLOCK_DEVICE.match(target):
                    return f"writing to the device {target}"
        commands = [strip_wrappers(command.words) for command in pipeline]
        for words in commands:
            if words and (reason := self._check_command(words, subs, depth)):
                return reason
        fetched = False
        for words in commands:
            if not words:
                continue
            name = basename(words[0])
            if fetched and is_interpreter(name) and runs_stdin(words[1:]):
                return f"piping a download into {name} runs unreviewed code"
            fetched = fetched or name in _FETCHERS
        return None

    def _check_command(self, words: list[str], subs: list[str], depth: int) -> str | None:
        name, args = basename(words[0]), words[1:]
        if name in _PRIVILEGE:
            return f"{name}: running commands as another user is not allowed"
        if name.startswith("mkfs"):
            return f"{name} formats a filesystem"
        if name in _POWER or (name == "systemctl" and _SYSTEMCTL_POWER & set(args)):
            return "shutting down or rebooting the machine"
        if name in {"init", "telinit"} and args[:1] in (["0"], ["6"]):
            return "shutting down or rebooting the machine"
        if name == "rm":
            return self._check_rm(args, subs)
        if name in {"chmod", "chown", "chgrp"}:
            return self._check_recursive_owner_or_mode(name, args, subs)
        if name == "find":
            return self._check_find(args, subs)
        if name == "alias":  # `alias x='rm -rf /'` then `x` (with expand_aliases): the value is code
            for arg in args:
                if "=" in arg and (reason := self.check(arg.split("=", 1)[1], depth + 1)):
                    return f"an alias for: {reason}"
        if name == "dd":
            for arg in args:
                if arg.startswith("of=/dev/") and not _harmless_device(arg[len("of=/dev/") :]):
                    return f"dd writing to the device {arg[3:]}"
        code = _code_arguments(name, args)
        for arg in code:
            for index in placeholders(arg):
                if _mentions_fetcher(substitution(subs, index)):
                    return f"{name} running downloaded code"
            if reason := self.check(restore(arg, subs), depth + 1):
                return reason
        return None

    def _check_rm(self, args: list[str], subs: list[str]) -> str | None:
        recursive, targets = False, []
        options_done = False
        for arg in args:
            if not options_done and arg == "--":
                options_done = True
            elif not options_done and arg.startswith("--"):
                recursive = recursive or arg == "--recursive"
            elif not options_done and arg.startswith("-") and len(arg) > 1:
                recursive = recursive or "r" in arg or "R" in arg
            else:
                targets.append(arg)
        if not recursive:
            return None
        for target in targets:
            if why := self._critical(target, subs, include_workspace=True):
                return f"rm -r of {restore(target, subs)} ({why})"
        return None

    def _check_find(self, args: list[str], subs: list[str]) -> str | None:
        """`find / -delete`, `find ~ -exec rm {} +`: deleting below the root, a home or an ancestor."""
        deleting = "-delete" in args or any(
            arg in ("-exec", "-execdir", "-ok", "-okdir") and basename(nxt) in {"rm", "shred", "unlink"}
            for arg, nxt in itertools.pairwise(args)
        )
        if not deleting:
            return None
        roots = []
        for arg in args:
            if arg.startswith(("-", "(", "!")) and arg not in ("-H", "-L", "-P"):
                break
            if arg not in ("-H", "-L", "-P"):
                roots.append(arg)
        for root in roots:
            if why := self._critical(root, subs, include_workspace=False):
                return f"find deleting files below {restore(root, subs)} ({why})"
        return None

    def _check_recursive_owner_or_mode(self, name: str, args: list[str], subs: list[str]) -> str | None:
        recursive = "--recursive" in args or any(
            a.startswith("-") and not a.startswith("--") and "R" in a for a in args
        )
        if not recursive:
            return None
        for target in args:
            if not target.startswith("-") and (why := self._critical(target, subs, include_workspace=False)):
                return f"{name} -R on {restore(target, subs)} ({why})"
        return None

    def _critical(self, target: str, subs: list[str], *, include_workspace: bool) -> str | None:
        """Why deleting (or re-owning) `target` recursively would be a disaster, or None."""
        match = PLACEHOLDER.fullmatch(target)
        if match and substitution(subs, int(match.group(1))).strip() == "pwd":
            target = "."
        target = re.sub(r"^(?:\$HOME|\$\{HOME\})(?=/|$)", "~", target)
        target = re.sub(r"^(?:\$PWD|\$\{PWD\})(?=/|$)", ".", target)
        core = _strip_trailing(target)
        if core == "/":
            return "the filesystem root"
        if core.startswith("~"):
            return "a home folder" if "/" not in core else None
        if core.startswith("$"):
            variable = _BARE_VARIABLE.fullmatch(core)
            if variable and core != target:
                name = variable.group(1)
                return f"this is / when ${name} is empty; write ${{{name}:?}}/ to fail instead"
            return None
        if PLACEHOLDER.search(core):
            return None
        if core.startswith("/"):
            return self._critical_absolute(Path(os.path.normpath(core)), include_workspace)
        if include_workspace and core in {"*", ".*"}:
            return "everything in the workspace"
        if _has_glob(core):
            return None
        if self.workspace is not None:
            return self._critical_absolute(Path(os.path.normpath(self.workspace / core)), include_workspace)
        parts = set(core.split("/"))
        if parts <= {".", ".."}:
            if ".." in parts:
                return "a folder above the workspace"
            return "the workspace root" if include_workspace else None
        return None

    def _critical_absolute(self, path: Path, include_workspace: bool) -> str | None:
        if len(path.parts) <= 2:
            return "the filesystem root" if len(path.parts) <= 1 else f"the top-level folder {path}"
        if path == Path(os.path.expanduser("~")):
            return "a home folder"
        if self.workspace is not None:
            if path == self.workspace and include_workspace:
                return "the workspace root"
            if path != self.workspace and self.workspace.is_relative_to(path):
                return "a folder that contains the workspace"
        return None


def strip_wrappers(words: list[str]) -> list[str]:
    """The command proper: leading assignments and wrappers like `env X=1`, `nohup`, `timeout 5` removed."""
    i = 0
    while i < len(words):
        word = words[i]
        if _ASSIGNMENT.fullmatch(word):
            i += 1
            continue
        if basename(word) not in _WRAPPERS:
            break
        i += 1
        while i < len(words) and words[i].startswith("-") and words[i] != "-":
            i += 2 if words[i] in _WRAPPER_OPTIONS_WITH_VALUE else 1
        if i < len(words) and _NUMBER.fullmatch(words[i]):
            i += 1
    return words[i:]


def basename(word: str) -> str:
    return word.rsplit("/", 1)[-1] if word not in ("/", "") else word


def is_interpreter(name: str) -> bool:
    return name in _SHELLS or bool(_INTERPRETER.fullmatch(name))


def runs_stdin(args: list[str]) -> bool:
    """Whether an interpreter with these arguments reads its program from stdin."""
    for arg in args:
        if arg in ("-", "-s"):
            return True
        if arg in ("-c", "-m", "-e", "-E", "--eval") or not arg.startswith("-"):
            return False
    return True


def shell_code(name: str, args: list[str]) -> list[str]:
    """The shell code that `name args` runs itself: `bash -c CODE`, `eval CODE...` (else [])."""
    return _code_arguments(name, args) if name in _SHELLS or name == "eval" else []


def _code_arguments(name: str, args: list[str]) -> list[str]:
    """The arguments that this command runs as shell code (`bash -c CODE`, `eval CODE...`)."""
    if name in _CODE_RUNNERS:
        return [" ".join(args)] if args else []
    if name in _SHELLS:
        for index, arg in enumerate(args):
            if arg.startswith("-") and not arg.startswith("--") and "c" in arg:
                rest = [a for a in args[index + 1 :] if not a.startswith("-")]
                return rest[:1]
            if not arg.startswith("-"):
                return [arg] if PLACEHOLDER.search(arg) else []
        return []
    if is_interpreter(name):
        for index, arg in enumerate(args):
            if arg in ("-c", "-e", "-E", "--eval"):
                code = args[index + 1 : index + 2]
                return [c for c in code if PLACEHOLDER.search(c)]
            if not arg.startswith("-"):
                return [arg] if PLACEHOLDER.search(arg) else []
    return []


def _mentions_fetcher(code: str) -> bool:
    flat, _ = extract_substitutions(code)
    try:
        tokens = tokenize(flat)
    except ValueError:
        tokens = flat.split()
    return any(basename(token) in _FETCHERS for token in tokens)


def _strip_trailing(target: str) -> str:
    core = target
    while core != "/":
        for suffix in ("/*", "/.", "/"):
            if core.endswith(suffix):
                core = core[: -len(suffix)] or "/"
                break
        else:
            break
    return core


def _has_glob(text: str) -> bool:
    return any(c in text for c in "*?[")


def _harmless_device(name: str) -> bool:
    return name in _HARMLESS_DEVICES or name.startswith(("fd/", "pts/", "shm/"))
