"""The tool seam: every tool is one module with a pydantic Args model, an async `run`, and its facts.

A tool raises `ToolFailure` (or any exception) to report a problem; the tool box turns that into an
error result for the model. Nothing a tool does is ever raised to the user.

What a tool *is* lives on the tool, in one place, so the tool box, the approval policy, the rules, the
plan contract and the display never keep tables of tool names (MCP tools set the same facts):
`effect` (reads, writes files, or executes), `confined` (the workspace guard checks every path it
touches), `path_argument` and `command_argument` (what rules and scopes look at), `untrusted_output`
(its output is data, marked as such for the model, saying where it comes from: `data_source`) and
`summary_argument` (what is shown after its name).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel

from paicli.sandbox.containment import Sandbox
from paicli.tools.effect import Effect as Effect  # re-exported: tools import their facts from here
from paicli.tools.task_scope import TaskScope

if TYPE_CHECKING:  # the events load with the first turn, not before the first prompt
    from paicli.common.events import EventSink
    from paicli.sandbox.memos import FolderMemos
    from paicli.tools.listing_memo import ListingMemo

# What the model is told after a refusal, and the user never sees (ToolOutcome.advice).
DO_NOT_RETRY = "Do not retry it; carry on without it, or finish and tell the user what to run themselves."


class ToolFailure(Exception):
    """A refusal or failure whose message goes back to the model as the tool result."""


class SandboxBlocked(ToolFailure):
    """A command that ran in the sandbox and failed, by the look of its output, because of the sandbox (a
    read-only path, no network). The tool box asks the gate whether it may run once outside; if not,
    the result is `output`, the `reason` (with what the gate says) and the `status` line, in that order."""

    def __init__(self, output: str, status: str, reason: str) -> None:
        self.output, self.status, self.reason = output, status, reason
        super().__init__(self.result())

    def result(self, note: str = "") -> str:
        return f"{self.output}\n[sandbox] {self.reason}.{' ' + note if note else ''}\n{self.status}"


@dataclass(frozen=True)
class Admission:
    """A gate's answer about one call: refused (the message for the model), or run, and where."""

    refusal: str | None = None
    advice: str = ""  # with a refusal: what the model is told to do about it, never shown to the user
    outside: bool = False  # a command runs outside the sandbox (named in `unsandboxed`, or granted)


class PathLocks:
    """One asyncio lock per resolved path, so two tasks never write the same file at the same time."""

    def __init__(self) -> None:
        self._locks: dict[Path, asyncio.Lock] = {}

    def lock(self, path: Path) -> asyncio.Lock:
        return self._locks.setdefault(path, asyncio.Lock())


class ApprovalRequest(BaseModel):
    task_id: str | None
    tool: str
    summary: str  # what is asked, e.g. the command line
    reason: str  # why it needs approval


class ApprovalDecision(BaseModel):
    allowed: bool
    how: Literal["policy", "rule", "user", "session"] = "policy"
    reason: str = ""


Approver = Callable[[ApprovalRequest], Awaitable[ApprovalDecision]]


@dataclass
class ToolContext:
    """Everything a tool may touch, passed in (never global)."""

    workspace: Path
    task_id: str | None = None
    locks: PathLocks = field(default_factory=PathLocks)
    approve: Approver | None = None  # None: no human in the loop (what the policy allows runs)
    secrets: list[str] = field(default_factory=list)  # values masked in everything a tool returns
    command_timeout: float = 60.0
    output_limit: int = 16_000  # characters of tool output the model sees (head + tail)
    scope: TaskScope | None = None  # what a plan task's calls may do (the plan contract); None: chat
    sandbox: Sandbox | None = None  # what commands run in (paicli/sandbox/); None: as the user, uncontained
    on_output: Callable[[str], None] | None = None  # told a running command's output as it comes (the display)
    # Told, when a running call is cancelled, what it had produced so far (a command's output), before the
    # cancellation travels on: the display and the conversation keep it (paicli/agent/react.py).
    on_cancelled: Callable[[str], None] | None = None
    # Asked whether to keep git-controlled paths a sandboxed command made (a new `.git`); None: never kept.
    keep_added: Callable[[list[str]], Awaitable[bool]] | None = None
    sink: EventSink | None = None  # where what a hook says is shown (paicli/policy/hooks.py); None: nowhere
    # Told a one-line warning the user must see beside the result (a `.git` the sandbox removed): the agent
    # makes it a Notice event (REPL, headless stderr, `--json`); None: the result alone says it.
    notice: Callable[[str], None] | None = None
    # The session's folder listings (paicli/sandbox/memos.py) for the walks around a command; None: none kept.
    folders: FolderMemos | None = None
    # The session's memo of the workspace's listing (paicli/tools/listing_memo.py): grep_code's, glob_files'.
    listings: ListingMemo | None = None


class Tool:
    """Base of all tools. Subclasses set the class attributes and implement `run`."""

    name: ClassVar[str]
    description: ClassVar[str]
    Args: ClassVar[type[BaseModel]]
    effect: ClassVar[Effect] = Effect.EXECUTE  # fail closed: a tool that says nothing may do anything
    confined: ClassVar[bool] = False  # every path it touches goes through the workspace guard
    # It acts outside paicli's view (an MCP server's tool): neither the guard nor the sandbox contains it, so
    # in a plan task the workspace paths its arguments name are checked against the task's `files`.
    external: ClassVar[bool] = False
    path_argument: ClassVar[str | None] = None  # the argument naming the workspace path it reads or writes
    command_argument: ClassVar[str | None] = None  # the argument holding a shell command line
    untrusted_output: ClassVar[bool] = False  # its output is data, marked so for the model
    data_source: ClassVar[str] = "the workspace"  # where that data comes from, as the marker says
    summary_argument: ClassVar[str | None] = None  # shown after the name; None: its first string argument

    @property
    def read_only(self) -> bool:
        return self.effect is Effect.READ

    async def run(self, args: Any, ctx: ToolContext) -> str:
        raise NotImplementedError

    def failure(self, output: str) -> str | None:
        """Why a call that ran counts as failed, from its output (a command's non-zero exit); None: it did not.
        Used where the harness runs a call itself and must decide (a plan task's direct action)."""
        return None

    def summary(self, arguments: Mapping[str, Any]) -> str:
        """What a call does, in a few words: `src/app.py`, `pytest -q`, `TODO in src/` (not sanitized)."""
        key = self.summary_argument
        value = arguments.get(key) if key else next((v for v in arguments.values() if isinstance(v, str)), None)
        if value is None and key in self.Args.model_fields:
            value = self.Args.model_fields[key].default  # list_dir without a path lists "."
        if not isinstance(value, str):
            return ""
        where = arguments.get(self.path_argument) if self.path_argument and key != self.path_argument else None
        return f"{value} in {where}" if isinstance(where, str) and where else value

    @classmethod
    def spec(cls) -> dict[str, Any]:
        """The OpenAI function-tool schema the model sees."""
        schema = cls.Args.model_json_schema()
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
        return {
            "type": "function",
            "function": {"name": cls.name, "description": cls.description, "parameters": schema},
        }


class ToolOutcome(BaseModel):
    ok: bool
    output: str
    diff: str = ""  # what a write changed, for the display only (paicli/tools/diff.py)
    arguments: dict[str, Any] | str  # parsed arguments when they parsed, else the raw text
    # The line that tells the model this output is data, not instructions ("" when it is paicli's own text):
    # kept apart from `output`, which the user and scripts see as the tool wrote it (paicli/tools/toolbox.py).
    marker: str = ""
    advice: str = ""  # after a refusal, what the model is told to do about it (not the user's business)

    @property
    def for_model(self) -> str:
        """The output as a model message carries it: marked as data when it is untrusted, a refusal with
        its advice."""
        return self.marker + self.output + (f" {self.advice}" if self.advice else "")
