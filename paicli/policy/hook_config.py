"""The `[hooks]` table of a config file: shell commands paicli runs at five points (paicli/policy/hooks.py
runs them; docs/contract.md#hooks says what they are given and may answer).

    [[hooks.before_tool]]                 # may allow, ask or refuse the call
    command = "python3 scripts/guard.py"
    tools = ["execute_command"]

    [[hooks.after_tool]]                  # e.g. format the file just written
    command = 'ruff format "$PAICLI_PATH"'
    tools = ["write_file", "edit_file"]

A repository's `[hooks]` apply only once its config is trusted (paicli/trust.py); the lists of the user's
and the repository's file add up, the user's first.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

HookEvent = Literal["before_tool", "after_tool", "turn_end", "plan_end", "plan_approved"]
HOOK_EVENTS: tuple[HookEvent, ...] = ("before_tool", "after_tool", "turn_end", "plan_end", "plan_approved")


class HookConfig(BaseModel):
    """One hook: a `bash -c` command line run in the workspace."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    command: str = Field(min_length=1, description="the `bash -c` command line; the JSON of the event on its stdin")
    tools: list[str] = Field(
        default_factory=lambda: ["*"],
        description="before_tool, after_tool: the tools it is run for (names, `*` patterns: mcp__github__*)",
    )
    timeout: float = Field(30.0, gt=0, le=600, description="seconds before it is killed (a notice; the turn goes on)")
    sandbox: bool = Field(True, description="run it in the sandbox, as commands are (false: as you, uncontained)")
    to_model: bool = Field(False, description="after_tool: its output is added to the tool result the model sees")


class HooksConfig(BaseModel):
    """`[hooks]`: a list of hooks per point, run in order."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    before_tool: list[HookConfig] = Field(default_factory=list)
    after_tool: list[HookConfig] = Field(default_factory=list)
    turn_end: list[HookConfig] = Field(default_factory=list)
    plan_end: list[HookConfig] = Field(default_factory=list)
    plan_approved: list[HookConfig] = Field(default_factory=list)

    def of(self, event: HookEvent) -> list[HookConfig]:
        hooks: list[HookConfig] = getattr(self, event)
        return hooks

    def __bool__(self) -> bool:
        return any(self.of(event) for event in HOOK_EVENTS)


def merged_hooks(earlier: object, later: object) -> object:
    """Two `[hooks]` tables as read from TOML, the lists of each point added up (the earlier file's first);
    anything that is not a table is left for validation to refuse."""
    if not isinstance(earlier, dict) or not isinstance(later, dict):
        return later
    merged = dict(earlier)
    for event, hooks in later.items():
        before = merged.get(event)
        merged[event] = [*before, *hooks] if isinstance(before, list) and isinstance(hooks, list) else hooks
    return merged
