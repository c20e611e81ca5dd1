"""The tool seam: every tool is one module with a pydantic Args model and an async `run`.

A tool raises `ToolFailure` (or any exception) to report a problem; the tool box turns that into an
error result for the model. Nothing a tool does is ever raised to the user.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel


class ToolFailure(Exception):
    """A refusal or failure whose message goes back to the model as the tool result."""


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


class Tool:
    """Base of all tools. Subclasses set the class attributes and implement `run`."""

    name: ClassVar[str]
    description: ClassVar[str]
    Args: ClassVar[type[BaseModel]]
    read_only: ClassVar[bool] = False

    async def run(self, args: Any, ctx: ToolContext) -> str:
        raise NotImplementedError

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
    arguments: dict[str, Any] | str  # parsed arguments when they parsed, else the raw text
