"""The hard denylist: shell commands refused in every approval mode, `yolo` included.

`dangerous_reason` looks at what bash would run, not at the text: the command is split on `;`, `&&`,
`||`, `|`, `&` and newlines, quotes are removed (`r"m"` is rm), wrappers are skipped (`env`, `nohup`,
`timeout 5`, ...), and the code inside `bash -c '...'`, `eval`, `$(...)`, backticks and `<(...)` is
checked too. Quoted text is data: `echo 'rm -rf /'` is fine.

It errs on the side of refusing: `#` comments are not recognised (`a#b` is a word in bash, and
telling the two apart is not worth a bypass), `rm -rf *` is refused even after a `cd`, and a quoted
`;` counts as a separator. Text that shlex cannot split (unbalanced quotes) is not dangerous by itself
here; the approval layer fails closed on it. Anything subtler (scripts, `find -delete`, aliases) is the
approval policy's business, not this list's.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

_MAX_DEPTH = 8
_OPERATOR_CHARS = "();<>|&\n"
_PLACEHOLDER = re.compile(r"__paicli_sub_(\d+)__")

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
_FORK_BOMB = re.compile(
    r"(?:function\s+)?([^\s(){}|;&<>]{1,64})\s*(?:\(\s*\))?\s*\{[^}]{0,200}?\1\s*\|\s*&?\s*\1",
)
_DEVICE_REDIRECT = "> device"  # pseudo command word for `> /dev/sda` (a real word cannot hold the space
# unquoted; a quoted one only makes a false refusal)


def dangerous_reason(command: str, *, workspace: Path | None = None) -> str | None:
    """Why `command` is on the hard denylist, or None. Never raises.

    `workspace`, when given, also protects the workspace folder and its ancestors by absolute path.
    """
    root = Path(os.path.realpath(workspace)) if workspace is not None else None
    return _Checker(root).check(command, depth=0)


class _Checker:
    def __init__(self, workspace: Path | None) -> None:
        self.workspace = workspace

    def check(self, text: str, depth: int) -> str | None:
        if depth > _MAX_DEPTH:
            return "commands nested too deeply to check"
        if _FORK_BOMB.search(text):
            return "a fork bomb"
        flat, subs = extract_substitutions(text)
        for sub in subs:
            if reason := self.check(sub, depth + 1):
                return reason
        for pipeline in _pipelines(flat):
            if reason := self._check_pipeline(pipeline, subs, depth):
                return reason
        return None

    def _check_pipeline(self, pipeline: list[list[str]], subs: list[str], depth: int) -> str | None:
        commands = [_strip_wrappers(words) for words in pipeline]
        for words in commands:
            if words and (reason := self._check_command(words, subs, depth)):
                return reason
        fetched = False
        for words in commands:
            if not words:
                continue
            name = _basename(words[0])
            if fetched and _is_interpreter(name) and _runs_stdin(words[1:]):
                return f"piping a download into {name} runs unreviewed code"
            fetched = fetched or name in _FETCHERS
        return None

    def _check_command(self, words: list[str], subs: list[str], depth: int) -> str | None:
        name, args = _basename(words[0]), words[1:]
        if words[0] == _DEVICE_REDIRECT:
            return f"writing to the device {args[0]}"
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
        if name == "dd":
            for arg in args:
                if arg.startswith("of=/dev/") and not _harmless_device(arg[len("of=/dev/") :]):
                    return f"dd writing to the device {arg[3:]}"
        code = _code_arguments(name, args)
        for arg in code:
            for index in _placeholders(arg):
                if _mentions_fetcher(subs[index]):
                    return f"{name} running downloaded code"
            if reason := self.check(_restore(arg, subs), depth + 1):
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
                return f"rm -r of {_restore(target, subs)} ({why})"
        return None

    def _check_recursive_owner_or_mode(self, name: str, args: list[str], subs: list[str]) -> str | None:
        recursive = "--recursive" in args or any(
            a.startswith("-") and not a.startswith("--") and "R" in a for a in args
        )
        if not recursive:
            return None
        for target in args:
            if not target.startswith("-") and (why := self._critical(target, subs, include_workspace=False)):
                return f"{name} -R on {_restore(target, subs)} ({why})"
        return None

    def _critical(self, target: str, subs: list[str], *, include_workspace: bool) -> str | None:
        """Why deleting (or re-owning) `target` recursively would be a disaster, or None."""
        match = _PLACEHOLDER.fullmatch(target)
        if match and subs[int(match.group(1))].strip() == "pwd":
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
        if _PLACEHOLDER.search(core):
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


def extract_substitutions(text: str) -> tuple[str, list[str]]:
    """Replace each top-level `$(...)`, backtick and `<(...)`/`>(...)` with a placeholder word.

    Returns the flattened text and the bodies, in order. Single-quoted text is left alone (bash does
    not substitute there); double-quoted text is searched, as bash does.
    """
    out: list[str] = []
    subs: list[str] = []
    i, n = 0, len(text)
    quote: str | None = None
    while i < n:
        char = text[i]
        if quote == "'":
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
            out.append(f" __paicli_sub_{len(subs) - 1}__ " if quote is None else f"__paicli_sub_{len(subs) - 1}__")
            i = end + 1
        elif char == "`":
            end = text.find("`", i + 1)
            while end > 0 and text[end - 1] == "\\":
                end = text.find("`", end + 1)
            end = n if end < 0 else end
            subs.append(text[i + 1 : end])
            out.append(f"__paicli_sub_{len(subs) - 1}__")
            i = end + 1
        else:
            out.append(char)
            i += 1
    return "".join(out), subs


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


def _tokenize(text: str) -> list[str]:
    lexer = shlex.shlex(text, posix=True, punctuation_chars=_OPERATOR_CHARS)
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    lexer.commenters = ""
    return list(lexer)


def _pipelines(flat: str) -> Iterator[list[list[str]]]:
    """Pipelines of simple commands (lists of words, redirections removed) in the flattened text."""
    try:
        chunks = [_tokenize(flat)]
    except ValueError:
        # Unbalanced quotes: bash runs the lines before the broken one, so check those that split.
        chunks = []
        for line in flat.splitlines():
            try:
                chunks.append(_tokenize(line))
            except ValueError:
                continue
    for tokens in chunks:
        yield from _split_tokens(tokens)


def _split_tokens(tokens: list[str]) -> Iterator[list[list[str]]]:
    pipeline: list[list[str]] = []
    words: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if not _is_operator(token):
            words.append(token)
        elif token.replace("\n", "") in ("|", "|&"):  # a newline may follow a pipe
            pipeline.append(words)
            words = []
        elif ("<" in token or ">" in token) and not any(c in token for c in "()"):
            target = tokens[i + 1] if i + 1 < len(tokens) else ""
            if ">" in token and _BLOCK_DEVICE.match(target):
                # Yield a pseudo-command so the redirection is reported like a command.
                yield [[_DEVICE_REDIRECT, target]]
            i += 1
        else:
            pipeline.append(words)
            yield pipeline
            pipeline, words = [], []
        i += 1
    pipeline.append(words)
    yield pipeline


def _is_operator(token: str) -> bool:
    return bool(token) and all(c in _OPERATOR_CHARS for c in token)


def _strip_wrappers(words: list[str]) -> list[str]:
    """The command proper: leading assignments and wrappers like `env X=1`, `nohup`, `timeout 5` removed."""
    i = 0
    while i < len(words):
        word = words[i]
        if _ASSIGNMENT.fullmatch(word):
            i += 1
            continue
        if _basename(word) not in _WRAPPERS:
            break
        i += 1
        while i < len(words) and words[i].startswith("-") and words[i] != "-":
            i += 2 if words[i] in _WRAPPER_OPTIONS_WITH_VALUE else 1
        if i < len(words) and _NUMBER.fullmatch(words[i]):
            i += 1
    return words[i:]


def _basename(word: str) -> str:
    return word.rsplit("/", 1)[-1] if word not in ("/", "") else word


def _is_interpreter(name: str) -> bool:
    return name in _SHELLS or bool(_INTERPRETER.fullmatch(name))


def _runs_stdin(args: list[str]) -> bool:
    """Whether an interpreter with these arguments reads its program from stdin."""
    for arg in args:
        if arg in ("-", "-s"):
            return True
        if arg in ("-c", "-m", "-e", "-E", "--eval") or not arg.startswith("-"):
            return False
    return True


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
                return [arg] if _PLACEHOLDER.search(arg) else []
        return []
    if _is_interpreter(name):
        for index, arg in enumerate(args):
            if arg in ("-c", "-e", "-E", "--eval"):
                code = args[index + 1 : index + 2]
                return [c for c in code if _PLACEHOLDER.search(c)]
            if not arg.startswith("-"):
                return [arg] if _PLACEHOLDER.search(arg) else []
    return []


def _placeholders(text: str) -> list[int]:
    return [int(m.group(1)) for m in _PLACEHOLDER.finditer(text)]


def _restore(text: str, subs: list[str]) -> str:
    return _PLACEHOLDER.sub(lambda m: f"$({subs[int(m.group(1))]})", text)


def _mentions_fetcher(code: str) -> bool:
    flat, _ = extract_substitutions(code)
    try:
        tokens = _tokenize(flat)
    except ValueError:
        tokens = flat.split()
    return any(_basename(token) in _FETCHERS for token in tokens)


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
