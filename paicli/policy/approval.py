"""ApprovalPolicy: decides every tool call before it runs (allow, ask the user, refuse) and audits it.

The order of the checks, first match wins:
 0. outside the plan task's scope (its type, its `files`)    → refused_out_of_scope (every mode)
 1. a deny rule from the configuration                       → refused_by_rule     (every mode)
 2. the hard denylist (rm -rf /, curl | sh, mkfs, ...)        → refused_by_denylist (every mode)
 3. nothing risky (read-only tools, file edits in the workspace, read-only commands) → allowed
 4. mode yolo, and paicli understood the command              → approved_by_mode
 5. allow rules covering every risky part                     → approved_by_rule
 6. an "always" answer given earlier in this session          → approved_by_session
 7. mode ask with a user to ask (ctx.approve)                 → approved_by_user / refused_by_user
 8. otherwise (mode auto, or nobody to ask)                   → refused_by_policy
What the classifier cannot read (OPAQUE) skips 4 and 5: it needs a human in every mode.

Modes: `ask` (the REPL default), `auto` (the headless default), `yolo`. With no mode configured the
policy asks when the tool context carries an approver (the REPL) and behaves as `auto` without one.
Parallel tasks ask one at a time; an "always" given while another task waited covers that task too.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from paicli.audit import AuditLog
from paicli.policy.classify import Classification, Risk, classify_command
from paicli.policy.rules import Rules
from paicli.policy.scope import out_of_scope
from paicli.tools.base import ApprovalDecision, ApprovalRequest, Effect, Tool, ToolContext
from paicli.tools.toolbox import builtin_tool

Mode = Literal["ask", "auto", "yolo"]
MODES: tuple[Mode, ...] = ("ask", "auto", "yolo")
DO_NOT_RETRY = "Do not retry it; carry on without it, or finish and tell the user what to run themselves."


class Decision(enum.StrEnum):
    ALLOWED = "allowed"
    APPROVED_BY_USER = "approved_by_user"
    APPROVED_BY_RULE = "approved_by_rule"
    APPROVED_BY_SESSION = "approved_by_session"
    APPROVED_BY_MODE = "approved_by_mode"
    REFUSED_BY_POLICY = "refused_by_policy"
    REFUSED_BY_USER = "refused_by_user"
    REFUSED_BY_RULE = "refused_by_rule"
    REFUSED_BY_DENYLIST = "refused_by_denylist"
    REFUSED_OUT_OF_SCOPE = "refused_out_of_scope"  # outside what the plan task declared (the plan contract)
    INVALID = "invalid"  # never decided: unknown tool or arguments that do not validate

    @property
    def allowed(self) -> bool:
        return self in _ALLOWING


_ALLOWING = {Decision.ALLOWED, Decision.APPROVED_BY_USER, Decision.APPROVED_BY_RULE,
             Decision.APPROVED_BY_SESSION, Decision.APPROVED_BY_MODE}  # fmt: skip


@dataclass(frozen=True)
class Ruling:
    decision: Decision
    reason: str = ""  # for the audit log: why it needed approval, or which rule decided
    message: str = ""  # for the model, when refused

    @property
    def allowed(self) -> bool:
        return self.decision.allowed


@dataclass(frozen=True)
class Assessment:
    """What a call is, before mode, rules and grants are looked at."""

    risk: Risk
    reason: str
    summary: str  # what the user is asked about: the command, or "write_file src/a.py"
    grant_keys: tuple[str, ...] = ()  # what an "always" answer remembers
    always_label: str = ""  # how the "always" answer is described to the user
    classification: Classification | None = None


class PolicyRequest(ApprovalRequest):
    """An ApprovalRequest that also says what "always" would allow (shown by the prompt)."""

    always: str = "this exact call"
    opaque: bool = False  # paicli could not read the command: the user should look closely


class ApprovalPolicy:
    def __init__(
        self,
        workspace: Path,
        *,
        mode: Mode | None = None,
        rules: Rules | None = None,
        audit: AuditLog | None = None,
    ) -> None:
        self.workspace = workspace
        self.mode: Mode | None = mode
        self.rules = rules or Rules(workspace=workspace)
        self.audit = audit
        self.grants: set[str] = set()
        self._asking = asyncio.Lock()

    def effective_mode(self, ctx: ToolContext) -> Mode:
        if self.mode is not None:
            return self.mode
        return "ask" if ctx.approve is not None else "auto"

    # ---- the gate the tool box calls ----

    async def admit(self, tool: Tool | str, arguments: Mapping[str, Any], ctx: ToolContext) -> str | None:
        """Decide and audit one call; returns the refusal for the model, or None to run it."""
        ruling = await self.decide(tool, arguments, ctx)
        if self.audit is not None:
            self.audit.record(
                tool=_name(tool), arguments=dict(arguments), decision=ruling.decision.value,
                reason=ruling.reason, task_id=ctx.task_id,
            )  # fmt: skip
        return None if ruling.allowed else ruling.message

    def reject(self, tool: str, arguments: Any, error: str, ctx: ToolContext) -> None:
        """Audit a call that never reached a decision (unknown tool, bad arguments)."""
        if self.audit is not None:
            self.audit.record(
                tool=tool, arguments=arguments, decision=Decision.INVALID.value, reason=error, task_id=ctx.task_id
            )

    # ---- the decision ----

    def assess(self, tool: Tool | str, arguments: Mapping[str, Any]) -> Assessment:
        """What the call is, from the tool's own facts (a name is looked up among the built-in tools)."""
        name, facts = _name(tool), _facts(tool)
        if facts is not None and (facts.effect is Effect.READ or (facts.effect is Effect.WRITE and facts.confined)):
            # reads, and writes the workspace guard confines (.git and .paicli protected): nothing to ask
            return Assessment(Risk.SAFE, "", _path_summary(facts, arguments))
        if facts is None or facts.command_argument is None:
            why = f"{name} is not a built-in tool" if facts is None else f"{name} can change things"
            return Assessment(
                Risk.ASK, why, f"{name} {dict(arguments)}",
                grant_keys=(f"tool:{name}",), always_label=f"every {name} call",
            )  # fmt: skip
        command = str(arguments.get(facts.command_argument, ""))
        found = classify_command(command, self.workspace)
        keys: list[str] = []
        if found.risk is Risk.ASK:
            for finding in found.asks:
                keys.append(f"cmd:{finding.prefix}" if finding.prefix else f"exact:{command}")
        elif found.risk is Risk.OPAQUE:
            keys.append(f"exact:{command}")
        keys = list(dict.fromkeys(keys))
        prefixes = [k.removeprefix("cmd:") for k in keys if k.startswith("cmd:")]
        label = "this exact command"
        if prefixes and len(prefixes) == len(keys):
            label = ", ".join(f"`{p} …`" for p in prefixes) + " commands"
        return Assessment(found.risk, found.reason, command, tuple(keys), label, found)

    async def decide(self, tool: Tool | str, arguments: Mapping[str, Any], ctx: ToolContext) -> Ruling:
        found = self.assess(tool, arguments)
        facts, name = _facts(tool), _name(tool)
        if ctx.scope is not None and (why := out_of_scope(ctx.scope, facts, arguments, self.workspace)):
            return _refuse(Decision.REFUSED_OUT_OF_SCOPE, why, f"refused: {why}")
        path_argument = facts.path_argument if facts is not None else None
        if rule := self.rules.denied_by(name, arguments, found.classification, path_argument=path_argument):
            return _refuse(Decision.REFUSED_BY_RULE, f"deny rule {rule.text!r}",
                           f"refused by the deny rule {rule.text!r} in the configuration. {DO_NOT_RETRY}")  # fmt: skip
        if found.risk is Risk.DENY:
            return _refuse(Decision.REFUSED_BY_DENYLIST, found.reason, f"refused: {found.reason}. {DO_NOT_RETRY}")
        if found.risk is Risk.OPAQUE and found.classification is not None and self.rules.denies_commands:
            reason = f"{found.reason}, so it cannot be checked against the deny rules"
            return _refuse(Decision.REFUSED_BY_RULE, reason, f"refused: {reason}. Write the command out plainly.")
        if found.risk is Risk.SAFE:
            return Ruling(Decision.ALLOWED)
        mode = self.effective_mode(ctx)
        if found.risk is Risk.ASK:
            if mode == "yolo":
                return Ruling(Decision.APPROVED_BY_MODE, found.reason)
            if rules := self.rules.allowed_by(name, arguments, found.classification, path_argument=path_argument):
                return Ruling(Decision.APPROVED_BY_RULE, "allow rule " + ", ".join(repr(r.text) for r in rules))
        if self._granted(found):
            return Ruling(Decision.APPROVED_BY_SESSION, found.reason)
        if mode == "auto" or ctx.approve is None:
            return _refuse(Decision.REFUSED_BY_POLICY, found.reason, _nobody_to_ask(found, mode))
        async with self._asking:
            if self._granted(found):  # answered "always" while this call waited its turn
                return Ruling(Decision.APPROVED_BY_SESSION, found.reason)
            return await self._ask_user(name, found, ctx)

    async def _ask_user(self, tool: str, found: Assessment, ctx: ToolContext) -> Ruling:
        assert ctx.approve is not None
        request = PolicyRequest(
            task_id=ctx.task_id, tool=tool, summary=found.summary, reason=found.reason,
            always=found.always_label, opaque=found.risk is Risk.OPAQUE,
        )  # fmt: skip
        try:
            answer: ApprovalDecision = await ctx.approve(request)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # a broken prompt must refuse, never allow
            reason = f"the approval prompt failed ({type(error).__name__}: {error})"
            return _refuse(Decision.REFUSED_BY_USER, reason, f"refused: {reason}. {DO_NOT_RETRY}")
        if answer.allowed:
            always = answer.how == "session"
            if always:
                self.grants.update(found.grant_keys)
            return Ruling(Decision.APPROVED_BY_USER, found.reason + (" (always, this session)" if always else ""))
        why = answer.reason.strip()
        message = "refused by the user" + (f": {why}" if why else "") + f". {DO_NOT_RETRY}"
        return _refuse(Decision.REFUSED_BY_USER, why or "the user said no", message)

    def _granted(self, found: Assessment) -> bool:
        return bool(found.grant_keys) and all(key in self.grants for key in found.grant_keys)


def _refuse(decision: Decision, reason: str, message: str) -> Ruling:
    return Ruling(decision, reason, message)


def _nobody_to_ask(found: Assessment, mode: Mode) -> str:
    why = found.reason or "it needs approval"
    if mode == "auto":
        situation = "approval mode is auto, so nothing that needs approval runs"
    else:
        situation = "nobody can approve it here (no terminal)"
    hint = ""
    if found.risk is Risk.ASK and found.classification is not None:
        hint = " The user can allow such commands with an allow rule in .paicli/config.toml."
    elif found.risk is Risk.ASK and (named := [k for k in found.grant_keys if k.startswith("tool:")]):
        tool = named[0].removeprefix("tool:")
        hint = f' The user can allow it with an allow rule naming the tool (allow = ["{tool}"]) in a config file.'

    return f"refused: `{found.summary}` needs the user's approval ({why}) and {situation}.{hint} {DO_NOT_RETRY}"


def _name(tool: Tool | str) -> str:
    return tool if isinstance(tool, str) else tool.name


def _facts(tool: Tool | str) -> Tool | None:
    """The tool itself; for a name, the built-in tool of that name (None: not a built-in tool)."""
    return builtin_tool(tool) if isinstance(tool, str) else tool


def _path_summary(tool: Tool, arguments: Mapping[str, Any]) -> str:
    path = arguments.get(tool.path_argument) if tool.path_argument else None
    return f"{tool.name} {path}" if isinstance(path, str) else tool.name
