"""Custom slash commands: a project's own prompts, kept as Markdown files, run as `/NAME ARGS`.

Where they come from: `~/.paicli/commands/` (the user's own) and the repository's `.paicli/commands/`,
whose files count only once the user trusts each of them as it is now (asked with the repository's config
at start-up, paicli/trusted_folders.py; untrusted ones are left out). A repository's command of the same name
replaces the user's, with a notice. A folder is a namespace: `frontend/review.md` is `/frontend:review`.
A name of paicli's own commands (`/help`, `/plan`, ...) is refused with a notice: a file never changes
what a built-in does.

A file is the prompt sent as the user's message, `$ARGUMENTS` replaced by what follows the name and `$1`,
`$2`, ... `$9` by its words (quoted as in a shell); without a placeholder, non-empty arguments are added at
the end as `ARGUMENTS: ...`. Optional front matter between two `---` lines:

    description: what /help and completion show
    argument-hint: [FILE]
    allowed-tools: read_file, grep_code, mcp__github__*    the only tools of that turn (or plan)
    plan: true                                             plan it instead of chatting

Other keys (a `model` of another agent's commands) are ignored. Both front ends use this module: the REPL
(paicli/ui/commands/custom_command.py) and `paicli run /NAME ARGS` (paicli/headless.py).
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from paicli.common.errors import ConfigError
from paicli.tools.confined import UnsafeFile, read_path
from paicli.tools.toolbox import ToolBox
from paicli.trust import MAX_REPO_FILE_BYTES
from paicli.trusted_folders import COMMANDS_FOLDER, MAX_PROMPT_FILES, markdown_files, trusted_text

# The REPL's own commands (paicli/ui/commands/table.py; tests/ui/commands/test_custom_command.py keeps the
# two equal): a custom command may not take one of these names, in the REPL or headless.
BUILTIN_COMMANDS = frozenset(
    {
        *("/help", "/clear", "/new", "/resume", "/model", "/plan", "/plans", "/approval", "/audit", "/undo"),
        *("/redo", "/changes", "/expand", "/transcript", "/init", "/compact", "/map", "/mcp", "/thinking"),
        *("/usage", "/exit", "/quit"),
    }
)
SEGMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
NAME = re.compile(r"/[A-Za-z0-9][A-Za-z0-9_-]{0,63}(?::[A-Za-z0-9][A-Za-z0-9_-]{0,63}){0,3}")
MAX_DEPTH = 4  # folders and file: /a:b:c:d
PLACEHOLDER = re.compile(r"\$ARGUMENTS\b|\$([1-9])(?!\d)")
COMMENT = re.compile(r"(?:^|\s+)#.*$")  # `key: value  # a note`, as in YAML
KEY = re.compile(r"([A-Za-z][A-Za-z0-9_-]*)\s*:\s*(.*)")
TRUE, FALSE = ("true", "yes", "on"), ("false", "no", "off")
Source = Literal["user", "repository"]


@dataclass(frozen=True)
class CustomCommand:
    name: str  # with the slash: "/frontend:review"
    text: str  # the prompt, without its front matter
    path: Path  # where it was read, for messages
    source: Source
    description: str = ""
    argument_hint: str = ""
    allowed_tools: tuple[str, ...] | None = None  # None: every tool; () none
    plan: bool = False

    @property
    def summary(self) -> str:
        """What /help and completion say of it."""
        where = "this repository's command" if self.source == "repository" else "your command"
        return f"{self.description} ({where})" if self.description else f"{where} {self.path.name}"


@dataclass(frozen=True)
class CustomCommands:
    commands: dict[str, CustomCommand] = field(default_factory=dict)  # by name
    notices: tuple[str, ...] = ()  # what was left out, and why

    def find(self, name: str) -> CustomCommand | None:
        return self.commands.get(name)


def load_custom_commands(workspace: Path, home: Path, *, builtin: Collection[str] = BUILTIN_COMMANDS) -> CustomCommands:
    """The user's commands, then the repository's trusted ones over them; never raises."""
    notices: list[str] = []
    found: dict[str, CustomCommand] = {}
    user_folder = home / COMMANDS_FOLDER
    for relative in _user_files(user_folder):
        path = user_folder / relative
        try:
            text = read_path(path, limit=MAX_REPO_FILE_BYTES).decode("utf-8", errors="replace")
        except (UnsafeFile, OSError) as error:
            notices.append(f"ignoring the custom command {path}: {error}")
            continue
        _add(found, notices, relative, text, path, "user", builtin)
    if os.path.realpath(workspace) != os.path.realpath(home):
        try:
            usable, _ = markdown_files(workspace, COMMANDS_FOLDER)  # what is refused was said at start-up
        except (UnsafeFile, OSError):
            usable = []
        for relative in usable:
            trusted = trusted_text(workspace, home, f"{COMMANDS_FOLDER}/{relative}")
            if trusted is not None:  # untrusted: the warning (or the question) came with the config
                path = workspace / COMMANDS_FOLDER / relative
                _add(found, notices, relative, trusted, path, "repository", builtin)
    return CustomCommands(dict(sorted(found.items())), tuple(notices))


def _user_files(folder: Path) -> list[str]:
    """The `.md` files below the user's folder (file symlinks followed: the user put them there; folder
    symlinks not walked), relative to it, at most MAX_PROMPT_FILES."""
    files: list[str] = []
    for current, folders, names in os.walk(folder):
        folders.sort()
        for name in sorted(names):
            if name.endswith(".md"):
                files.append(os.path.relpath(os.path.join(current, name), folder))
        if len(files) >= MAX_PROMPT_FILES:
            break
    return files[:MAX_PROMPT_FILES]


def _add(
    found: dict[str, CustomCommand],
    notices: list[str],
    relative: str,
    text: str,
    path: Path,
    source: Source,
    builtin: Collection[str],
) -> None:
    name = command_name(relative)
    if name is None:
        notices.append(
            f"ignoring the custom command {path}: a name is letters, digits, - and _ (at most 64), "
            f"in at most {MAX_DEPTH - 1} folders"
        )
        return
    if name in builtin:
        notices.append(f"ignoring the custom command {path}: {name} is one of paicli's own commands")
        return
    try:
        command = parse_command(name, text, path, source)
    except ValueError as error:
        notices.append(f"ignoring the custom command {path}: {error}")
        return
    if (earlier := found.get(name)) is not None:
        notices.append(f"this repository's {name} replaces yours ({earlier.path})")
    found[name] = command


def command_name(relative: str) -> str | None:
    """`frontend/review.md` → "/frontend:review"; None when a part is not a valid name."""
    parts = relative.removesuffix(".md").split(os.sep)
    if len(parts) > MAX_DEPTH or not all(SEGMENT.fullmatch(part) for part in parts):
        return None
    return "/" + ":".join(parts)


def parse_command(name: str, text: str, path: Path, source: Source) -> CustomCommand:
    """The command a file holds; ValueError for front matter that cannot be used."""
    meta, body = front_matter(text.removeprefix("\ufeff"))
    plan = meta.get("plan", "false")
    if not isinstance(plan, str) or plan.lower() not in TRUE + FALSE:
        raise ValueError(f"plan must be true or false, not {plan!r}")
    allowed = meta.get("allowed-tools")
    if isinstance(allowed, str):
        allowed = [item.strip() for item in allowed.strip().removeprefix("[").removesuffix("]").split(",")]
    return CustomCommand(
        name=name,
        text=body.strip(),
        path=path,
        source=source,
        description=_text(meta.get("description")),
        argument_hint=_text(meta.get("argument-hint")),
        allowed_tools=None if allowed is None else tuple(item for item in map(_unquoted, allowed) if item),
        plan=plan.lower() in TRUE,
    )


def front_matter(text: str) -> tuple[dict[str, str | list[str]], str]:
    """(the `key: value` lines between a first line `---` and the next `---`, the rest). A key with no
    value on its line takes the `- item` lines below it as a list. No closing `---`: no front matter."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}, text
    end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"), None)
    if end is None:
        return {}, text
    meta: dict[str, str | list[str]] = {}
    key = None
    for line in lines[1:end]:
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("- ") and key is not None and isinstance(meta.get(key), list):
            items = meta[key]
            assert isinstance(items, list)
            items.append(stripped[2:].strip())
        elif (match := KEY.fullmatch(stripped)) is not None:
            key, value = match.group(1).lower(), _value(match.group(2))
            meta[key] = value if value else []
    return meta, "\n".join(lines[end + 1 :])


def _value(raw: str) -> str:
    """A value without its `# comment`; a quoted one ends at its closing quote."""
    raw = raw.strip()
    if raw[:1] in ("'", '"') and (end := raw.find(raw[0], 1)) > 0:
        return raw[: end + 1]
    return COMMENT.sub("", raw).strip()


def _text(value: str | list[str] | None) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else " ".join(value)
    return _unquoted(text)[:300]


def _unquoted(text: str) -> str:
    """`"a b"` → `a b`: a value quoted as in YAML."""
    text = text.strip()
    return text[1:-1].strip() if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'" else text


def expand(command: CustomCommand, arguments: str) -> str:
    """The prompt with the arguments filled in."""
    words = _words(arguments)
    used = False

    def fill(match: re.Match[str]) -> str:
        nonlocal used
        used = True
        if match.group(1) is None:
            return arguments
        index = int(match.group(1)) - 1
        return words[index] if index < len(words) else ""

    text = PLACEHOLDER.sub(fill, command.text)
    if not used and arguments.strip():
        text = f"{text}\n\nARGUMENTS: {arguments.strip()}"
    return text.strip()


def _words(arguments: str) -> list[str]:
    try:
        return shlex.split(arguments)
    except ValueError:  # an unclosed quote: plain words
        return arguments.split()


def split_invocation(text: str) -> tuple[str, str] | None:
    """ "/frontend:review src/app.ts" → ("/frontend:review", "src/app.ts"); None when the text does not
    start with what could be a command's name ("/etc/hosts says ..." is a message)."""
    parts = text.strip().split(maxsplit=1)
    if not parts or NAME.fullmatch(parts[0]) is None:
        return None
    return parts[0], parts[1].strip() if len(parts) > 1 else ""


def narrowed(tools: ToolBox, allowed: Sequence[str]) -> tuple[ToolBox, list[str]]:
    """(`tools` with only the tools `allowed` names, `*` patterns included; the entries that name none)."""
    keep = [name for name in tools.names if any(fnmatch.fnmatchcase(name, pattern) for pattern in allowed)]
    unmatched = [pattern for pattern in allowed if not any(fnmatch.fnmatchcase(n, pattern) for n in tools.names)]
    return tools.only(keep), unmatched


@dataclass(frozen=True)
class Invocation:
    """`paicli run /NAME ARGS` resolved: what to send (or plan), with what tools, and what to tell first."""

    command: CustomCommand
    text: str
    notices: tuple[str, ...]


def invocation(prompt: str, workspace: Path, home: Path) -> Invocation | None:
    """The custom command a headless prompt names, filled in; None for a prompt that is a message (it does
    not start with "/NAME"); ConfigError for a name that is no custom command, or one with no text."""
    if not prompt.startswith("/") or (named := split_invocation(prompt)) is None:
        return None
    name, arguments = named
    custom = load_custom_commands(workspace, home)
    command = custom.find(name)
    if command is None:
        if name in BUILTIN_COMMANDS:
            raise ConfigError(f"{name} is a command of the REPL; `paicli run` runs custom commands only")
        known = f" (the custom commands: {', '.join(custom.commands)})" if custom.commands else ""
        raise ConfigError(
            f"unknown command {name}: no file for it in ~/{COMMANDS_FOLDER} or a trusted {COMMANDS_FOLDER}{known}; "
            "to send the prompt as it is, start it with a space"
        )
    text = expand(command, arguments)
    if not text:
        raise ConfigError(f"{name} has nothing to send: {command.path} is empty")
    return Invocation(command, text, custom.notices)
