"""Allow and deny rules from the configuration. Deny wins, in every approval mode.

    allow = ["pytest", "ruff check", "execute_command(npm test)", "write_file(docs/*)"]
    deny  = ["git push", "edit_file(migrations/*)", "execute_command(curl)"]

A rule is one of:
    TOOL              every call of that tool (read_file, write_file, edit_file, ..., execute_command)
    TOOL(PATTERN)     for execute_command a command prefix; for fetch_url a glob on the URL's host
                      (`fetch_url(*.python.org)`); for the other tools a glob on the path, relative to
                      the workspace (`*` also matches `/`: `src/*` is everything below src/)
    COMMAND PREFIX    short for execute_command(COMMAND PREFIX)
    mcp__PATTERN      MCP tools whose name matches the glob (`mcp__git__*`): paicli/policy/tool_patterns.py

A command prefix matches whole words with quotes removed: `git push` matches `git push -f origin` and
`/usr/bin/git push`, not `git pushx`. A trailing `*` or `:*` is accepted and ignored (`npm run test:*`).
A deny rule matches when ANY command of a command line matches (also inside `$(...)`, `bash -c`, after
wrappers such as `env`, `timeout 5`, run by `find -exec` or `xargs`, and given to options such as
`tar --to-command` or sed's `e`); an allow rule must cover EVERY command of the line that needs approval.
Allow rules never cover what the classifier cannot read (OPAQUE) or what the hard denylist refuses, nor
the words after their prefix that reach outside the workspace (`git commit -F ~/.ssh/id_rsa`, `git push
/tmp/x.git`, `--file=/x`, `@/etc/passwd`, git's `-C`, `-c`, `--git-dir`, ...: paicli/policy/reach.py)
unless the rule names them too.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paicli.policy.classify import Classification, Risk, normalise_name
from paicli.policy.reach import beyond
from paicli.policy.tool_patterns import check_tool_pattern, is_tool_pattern, names_tool
from paicli.shell.parse import parse_script
from paicli.shell.syntax import SimpleCommand
from paicli.tools.builtin.execute_command import ExecuteCommand
from paicli.tools.builtin.fetch_url import url_host
from paicli.tools.toolbox import BUILTIN_TOOLS

COMMAND_TOOL = ExecuteCommand.name  # what a rule without a tool name is about
TOOL_NAMES = tuple(tool.name for tool in BUILTIN_TOOLS)
_TOOL_FORM = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\((.*)\)", re.DOTALL)


@dataclass(frozen=True)
class Rule:
    text: str  # as written in the configuration
    tool: str
    words: tuple[str, ...] = ()  # execute_command: the command prefix; () = every command
    path_glob: str | None = None  # other tools: None = every path
    tool_glob: bool = False  # `tool` is a pattern on tool names (mcp__git__*)

    def names(self, tool: str) -> bool:
        """Whether the rule is about calls of `tool`."""
        return names_tool(self.tool, tool) if self.tool_glob else self.tool == tool


def parse_rule(text: str) -> Rule:
    """Raises ValueError with a readable reason for a rule that cannot be understood."""
    stripped = text.strip()
    if not stripped:
        raise ValueError("a rule is empty")
    if is_tool_pattern(stripped):
        return Rule(text, check_tool_pattern(stripped), tool_glob=True)
    form = _TOOL_FORM.fullmatch(stripped)
    if form:
        tool, pattern = form.group(1), form.group(2).strip()
    elif stripped in TOOL_NAMES:
        tool, pattern = stripped, ""
    else:
        tool, pattern = COMMAND_TOOL, stripped
    if tool != COMMAND_TOOL:
        return Rule(text, tool, path_glob=_normalise_glob(pattern) if pattern else None)
    pattern = re.sub(r":?\*$", "", pattern).strip()
    words = _command_words(text, pattern)
    if words:
        words[0] = normalise_name(words[0])
    return Rule(text, tool, words=tuple(words))


def parse_command_prefixes(texts: Iterable[str]) -> tuple[Rule, ...]:
    """The `unsandboxed` setting: command prefixes (`git push`), each a rule of execute_command with words;
    ValueError naming one that is not."""
    rules = tuple(parse_rule(text) for text in texts)
    for rule in rules:
        if rule.tool != COMMAND_TOOL or not rule.words:
            raise ValueError(f'{rule.text!r} is not a command prefix (write it as in a shell: "git push")')
    return rules


def starts_with(words: tuple[str, ...], prefix: tuple[str, ...]) -> bool:
    return len(words) >= len(prefix) and words[: len(prefix)] == prefix


def check_rules(texts: Iterable[str]) -> list[str]:
    """Validation for the settings: the texts unchanged, or ValueError naming the bad one."""
    texts = list(texts)
    for text in texts:
        parse_rule(text)
    return texts


class Rules:
    def __init__(self, allow: Iterable[str] = (), deny: Iterable[str] = (), *, workspace: Path | None = None) -> None:
        self.allow = tuple(parse_rule(text) for text in allow)
        self.deny = tuple(parse_rule(text) for text in deny)
        self.workspace = Path(os.path.realpath(workspace)) if workspace is not None else None

    @property
    def denies_commands(self) -> bool:
        return any(rule.tool == COMMAND_TOOL for rule in self.deny)

    def denied_by(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        classification: Classification | None = None,
        *,
        path_argument: str | None = "path",
    ) -> Rule | None:
        """`classification` is the parsed command of a command tool (None for other tools, whose
        `path_argument` names the path that a rule's glob is matched against)."""
        for rule in self.deny:
            if not rule.names(tool):
                continue
            if classification is not None:
                commands = classification.commands
                if not rule.words or any(starts_with(command, rule.words) for command in commands):
                    return rule
            elif self._path_matches(rule, arguments, path_argument, any_spelling=True):
                return rule
        return None

    def allowed_by(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        classification: Classification | None = None,
        *,
        path_argument: str | None = "path",
    ) -> tuple[Rule, ...]:
        """The allow rules that together cover this call; () when they do not."""
        candidates = [rule for rule in self.allow if rule.names(tool)]
        if classification is None:
            covers = [self._path_matches(rule, arguments, path_argument, any_spelling=False) for rule in candidates]
            return next(((rule,) for rule, hit in zip(candidates, covers, strict=True) if hit), ())
        if classification.risk is not Risk.ASK:
            return ()
        used: list[Rule] = []
        for finding in classification.asks:
            if finding.words is None:
                return ()
            rule = next((r for r in candidates if self.covers(finding.words, r)), None)
            if rule is None:
                return ()
            if rule not in used:
                used.append(rule)
        return tuple(used)

    def covers(self, words: tuple[str, ...], rule: Rule) -> bool:
        """Whether an allow rule's prefix covers a command: it starts with it, and none of the words it
        leaves unnamed reaches outside the workspace (paicli/policy/reach.py)."""
        return starts_with(words, rule.words) and beyond(words, rule.words, self.workspace) is None

    def _path_matches(
        self, rule: Rule, arguments: Mapping[str, Any], path_argument: str | None, *, any_spelling: bool
    ) -> bool:
        """Deny rules match the path as written or as resolved; allow rules need both to match. A tool
        without a path argument matches only rules without a glob."""
        if rule.path_glob is None:
            return True
        if path_argument is None:
            return False
        raw = arguments.get(path_argument)
        if path_argument == "url":  # a network tool (fetch_url): the rule's glob is on the URL's host
            host = url_host(arguments)
            return host is not None and fnmatch.fnmatchcase(host, rule.path_glob.lower())
        spellings = self._spellings(raw if isinstance(raw, str) and raw.strip() else ".")
        hits = [fnmatch.fnmatchcase(path, rule.path_glob) for path in spellings]
        return any(hits) if any_spelling else all(hits)

    def _spellings(self, raw: str) -> list[str]:
        written = _normalise_glob(raw)
        if self.workspace is None:
            return [written]
        try:
            absolute = Path(raw) if os.path.isabs(raw) else self.workspace / raw
            resolved = Path(os.path.realpath(absolute))
        except (OSError, ValueError):
            return [written]
        spellings = [written]
        for candidate in (absolute, resolved):
            if candidate.is_relative_to(self.workspace):
                spellings.append(candidate.relative_to(self.workspace).as_posix() or ".")
        return spellings


def _command_words(text: str, pattern: str) -> list[str]:
    """The words of a rule's command prefix, read as bash reads one simple command."""
    if not pattern:
        return []
    script = parse_script(pattern)
    if script.unreadable:
        raise ValueError(f"the rule {text!r} cannot be read as a command ({script.unreadable[0].reason})")
    commands = [c for p in script.pipelines for c in p.commands]
    if len(commands) != 1 or not isinstance(commands[0], SimpleCommand):
        raise ValueError(f"the rule {text!r} holds shell operators; write one command prefix per rule")
    command = commands[0]
    if command.redirects or command.inputs or any(not w.static for w in command.words):
        raise ValueError(f"the rule {text!r} must be plain words: no redirections, variables or substitutions")
    assigned = [f"{a.name}={a.value.text if a.value else ''}" for a in command.assignments]
    return assigned + [w.text for w in command.words]


def _normalise_glob(path: str) -> str:
    normal = os.path.normpath(path.strip()).replace(os.sep, "/")
    return normal[2:] if normal.startswith("./") else normal
