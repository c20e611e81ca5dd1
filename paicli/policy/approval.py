"""ApprovalPolicy: decides every tool call before it runs (allow, ask the user, refuse) and audits it.

The order of the checks, first match wins:
 0. outside the plan task's scope (its type, its `files`)    → refused_out_of_scope (every mode)
 1. a deny rule from the configuration                       → refused_by_rule     (every mode)
 1a. a before_tool hook that refuses (policy/hooks.py)        → refused_by_hook     (every mode)
 1b. a file write on a git-controlled path (policy/git_guard.py) → asks the user     (every mode)
 2. the hard denylist (rm -rf /, curl | sh, mkfs, ...)        → refused_by_denylist (every mode)
 2b. a before_tool hook that asks                            → asks the user       (every mode)
 3. nothing risky (read-only tools, file edits in the workspace, read-only commands) → allowed
 3b. a command that runs in the sandbox and would only ask     → allowed_in_sandbox  (every mode)
     because it writes or runs project code (not one that destroys work: rm, git clean, ...;
     nor one that reads outside the workspace: what it reads reaches the model)
 4. mode yolo, and paicli understood the command              → approved_by_mode
 5. allow rules covering every risky part                     → approved_by_rule
    (a before_tool hook that allows counts as such a rule     → approved_by_hook)
 6. an "always" answer given earlier in this session          → approved_by_session
 7. mode ask with a user to ask (ctx.approve)                 → approved_by_user / refused_by_user
    (a call too large to show the user whole, paicli/common/shown.py → refused_by_policy, never asked)
 8. otherwise (mode auto, or nobody to ask)                   → refused_by_policy
What the classifier cannot read (OPAQUE) skips 3b, 4 and 5: it needs a human in every mode.

The sandbox (ctx.sandbox, paicli/sandbox/) is the wall, approvals the door: a command runs inside it
unless the configuration's `unsandboxed` prefixes name one of its commands or the user let such commands
run outside for the session; a command running outside is judged as without a sandbox. When a command
fails because of the sandbox, `escalate` decides whether it runs once outside: in `ask` mode the user is
asked (y once, n, a for these command prefixes this session); in `auto` and `yolo` it stays refused
(yolo means no questions, not no walls).

Modes: `ask` (the REPL default), `auto` (the headless default), `yolo`. With no mode configured the
policy asks when the tool context carries an approver (the REPL) and behaves as `auto` without one.
Parallel tasks ask one at a time; an "always" given while another task waited covers that task too.

What a call is before any of this: policy/assess.py; the decisions, rulings and questions: policy/ruling.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from paicli.common.shown import too_long_to_ask
from paicli.policy.assess import assess, contained, facts_of, name_of
from paicli.policy.audit import AuditLog
from paicli.policy.classify import Risk, classify_command
from paicli.policy.git_guard import GitPathsMemo, git_write_reason, keep_reason
from paicli.policy.hooks import Hooks
from paicli.policy.reach import beyond, changes_environment
from paicli.policy.rules import Rule, Rules, parse_command_prefixes, starts_with
from paicli.policy.ruling import (
    DO_NOT_RETRY,
    MODES,
    OUTSIDE,
    Assessment,
    Decision,
    Mode,
    PolicyRequest,
    Ruling,
    answer_of,
    nobody_to_ask,
    outside_hint,
    outside_prefix,
    programs_of,
    refuse,
)
from paicli.policy.scope import out_of_scope
from paicli.sandbox.folders import Folders
from paicli.tools.base import Admission, Tool, ToolContext

__all__ = [
    "DO_NOT_RETRY",
    "MODES",
    "OUTSIDE",
    "ApprovalPolicy",
    "Assessment",
    "Decision",
    "Mode",
    "PolicyRequest",
    "Ruling",
]


class ApprovalPolicy:
    def __init__(
        self,
        workspace: Path,
        *,
        mode: Mode | None = None,
        rules: Rules | None = None,
        audit: AuditLog | None = None,
        unsandboxed: tuple[str, ...] | list[str] = (),
        hooks: Hooks | None = None,
        folders: Folders | None = None,  # the session's walks of git-controlled paths (paicli/sandbox/memos.py)
    ) -> None:
        self.workspace = workspace
        self.hooks = hooks  # the before_tool hooks have their say on every call that gets that far
        self.mode: Mode | None = mode
        self.rules = rules or Rules(workspace=workspace)
        self.audit = audit
        self.unsandboxed: tuple[Rule, ...] = parse_command_prefixes(unsandboxed)
        self.grants: set[str] = set()
        self._asking = asyncio.Lock()
        self.waiting = 0  # questions queued behind the one being asked (the prompt shows "2 more waiting")
        self.git_paths = GitPathsMemo(workspace, folders=folders)

    def effective_mode(self, ctx: ToolContext) -> Mode:
        if self.mode is not None:
            return self.mode
        return "ask" if ctx.approve is not None else "auto"

    @contextlib.asynccontextmanager
    async def _one_question(self) -> AsyncIterator[None]:
        """One question to the user at a time; the others wait their turn, counted in `waiting`."""
        self.waiting += 1
        try:
            await self._asking.acquire()
        finally:
            self.waiting -= 1
        try:
            yield
        finally:
            self._asking.release()

    # ---- the gate the tool box calls ----

    async def admit(self, tool: Tool | str, arguments: Mapping[str, Any], ctx: ToolContext) -> Admission:
        """Decide and audit one call: the refusal for the model, or whether and where it runs."""
        ruling = await self.decide(tool, arguments, ctx)
        self._record(tool, arguments, ruling, ctx)
        if ruling.allowed:
            return Admission(outside=ruling.outside)
        return Admission(refusal=ruling.message, advice=ruling.advice)

    async def escalate(
        self, tool: Tool | str, arguments: Mapping[str, Any], ctx: ToolContext, reason: str
    ) -> str | None:
        """A command failed because of the sandbox (`reason`): None runs it once outside (the user said so,
        now or with an earlier "always"); otherwise what the model is told about it (the tool box adds
        DO_NOT_RETRY for the model alone). Audited."""
        ruling = await self._outside_ruling(tool, arguments, ctx, reason)
        self._record(tool, arguments, ruling, ctx)
        return None if ruling.allowed else ruling.message

    def _record(self, tool: Tool | str, arguments: Mapping[str, Any], ruling: Ruling, ctx: ToolContext) -> None:
        if self.audit is not None:
            facts = facts_of(tool)
            command = arguments.get(facts.command_argument) if facts and facts.command_argument else None
            programs = classify_command(command, self.workspace).programs if isinstance(command, str) else None
            self.audit.record(
                tool=name_of(tool),
                arguments=dict(arguments),
                decision=ruling.decision.value,
                reason=ruling.reason,
                task_id=ctx.task_id,
                programs=programs,
            )

    async def keep(self, tool: Tool, arguments: Mapping[str, Any], ctx: ToolContext, paths: list[str]) -> bool:
        """Whether git-controlled paths a sandboxed command made (a new `.git`) stay: only when the user says
        so, in `ask` mode (policy/git_guard.py). Audited."""
        found = Assessment(Risk.ASK, keep_reason(paths), f"keep {', '.join(paths)}")
        if self.effective_mode(ctx) != "ask" or ctx.approve is None:
            ruling = Ruling(Decision.REFUSED_BY_POLICY, found.reason)
        else:
            async with self._one_question():
                ruling = await self._ask_user(tool.name, found, ctx)
        self._record(tool, arguments, ruling, ctx)
        return ruling.allowed

    async def _ask_in_every_mode(self, name: str, found: Assessment, ctx: ToolContext) -> Ruling:
        """A write to a git-controlled path: asked in every mode, refused where nobody can be asked."""
        mode = self.effective_mode(ctx)
        if mode == "auto" or ctx.approve is None:
            return refuse(Decision.REFUSED_BY_POLICY, found.reason, nobody_to_ask(found, mode, ctx), DO_NOT_RETRY)
        async with self._one_question():
            return await self._ask_user(name, found, ctx)

    def reject(self, tool: str, arguments: Any, error: str, ctx: ToolContext) -> None:
        """Audit a call that never reached a decision (unknown tool, bad arguments)."""
        if self.audit is not None:
            self.audit.record(
                tool=tool, arguments=arguments, decision=Decision.INVALID.value, reason=error, task_id=ctx.task_id
            )

    # ---- the decision ----

    def assess(self, tool: Tool | str, arguments: Mapping[str, Any]) -> Assessment:
        """What the call is, from the tool's own facts (policy/assess.py)."""
        return assess(tool, arguments, self.workspace)

    async def decide(self, tool: Tool | str, arguments: Mapping[str, Any], ctx: ToolContext) -> Ruling:
        found = self.assess(tool, arguments)
        facts, name = facts_of(tool), name_of(tool)
        if ctx.scope is not None and (why := out_of_scope(ctx.scope, facts, arguments, self.workspace)):
            return refuse(Decision.REFUSED_OUT_OF_SCOPE, why, f"refused: {why}")
        path_argument = facts.path_argument if facts is not None else None
        if rule := self.rules.denied_by(name, arguments, found.classification, path_argument=path_argument):
            return refuse(
                Decision.REFUSED_BY_RULE,
                f"deny rule {rule.text!r}",
                f"refused by the deny rule {rule.text!r} in the configuration.",
                DO_NOT_RETRY,
            )
        hook = await self.hooks.before_tool(name, arguments, ctx) if self.hooks else None
        if hook is not None and hook.decision == "refuse":
            why = hook.reason or "a hook refused it"
            return refuse(Decision.REFUSED_BY_HOOK, why, f"refused by the project's hook: {why}.", DO_NOT_RETRY)
        why = git_write_reason(facts, arguments, self.workspace, ctx.scope, self.git_paths)
        if why or facts is None or not facts.confined:
            self.git_paths.forget()  # a command, an MCP call or this write may change what git reads
        if why:
            return await self._ask_in_every_mode(name, dataclasses.replace(found, risk=Risk.ASK, reason=why), ctx)
        if found.risk is Risk.DENY:
            return refuse(Decision.REFUSED_BY_DENYLIST, found.reason, f"refused: {found.reason}.", DO_NOT_RETRY)
        if found.risk is Risk.OPAQUE and found.classification is not None and self.rules.denies_commands:
            reason = f"{found.reason}, so it cannot be checked against the deny rules"
            return refuse(Decision.REFUSED_BY_RULE, reason, f"refused: {reason}. Write the command out plainly.")
        if hook is not None and hook.decision == "ask":
            why = "a hook asks: " + (hook.reason or "it wants your approval")
            return await self._ask_in_every_mode(name, dataclasses.replace(found, risk=Risk.ASK, reason=why), ctx)
        outside = self.runs_outside(found, ctx)
        if hook is not None and hook.decision == "allow" and found.risk is Risk.ASK:
            ruling = Ruling(Decision.APPROVED_BY_HOOK, "hook: " + (hook.reason or "allowed"))
        else:
            ruling = await self._judge(name, arguments, found, ctx, path_argument, outside)
        return dataclasses.replace(ruling, outside=outside) if ruling.allowed and outside else ruling

    def runs_outside(self, found: Assessment, ctx: ToolContext) -> bool:
        """Whether a command runs outside the sandbox: there is none, one of its commands is named in
        `unsandboxed`, or the user let all of its commands run outside for this session."""
        commands = found.classification.commands if found.classification is not None else ()
        if ctx.sandbox is None or not commands:
            return False
        if any(self._unsandboxed(command) for command in commands) and not changes_environment(found.classification):
            return True
        return all(OUTSIDE + outside_prefix(command) in self.grants for command in commands)

    def _unsandboxed(self, command: tuple[str, ...]) -> bool:
        """A command named by an `unsandboxed` prefix, with no word beyond it reaching outside (reach.py)."""
        return any(
            starts_with(command, rule.words) and beyond(command, rule.words, self.workspace) is None
            for rule in self.unsandboxed
        )

    async def _judge(
        self,
        name: str,
        arguments: Mapping[str, Any],
        found: Assessment,
        ctx: ToolContext,
        path_argument: str | None,
        outside: bool,
    ) -> Ruling:
        """Steps 3 to 8 of the module's list."""
        if found.risk is Risk.SAFE:
            return Ruling(Decision.ALLOWED)
        if found.risk is Risk.ASK and ctx.sandbox is not None and not outside and contained(found.classification):
            return Ruling(Decision.ALLOWED_IN_SANDBOX, found.reason)
        mode = self.effective_mode(ctx)
        if found.risk is Risk.ASK:
            if mode == "yolo":
                return Ruling(Decision.APPROVED_BY_MODE, found.reason)
            if rules := self.rules.allowed_by(name, arguments, found.classification, path_argument=path_argument):
                return Ruling(Decision.APPROVED_BY_RULE, "allow rule " + ", ".join(repr(r.text) for r in rules))
        if self._granted(found):
            return Ruling(Decision.APPROVED_BY_SESSION, found.reason)
        if mode == "auto" or ctx.approve is None:
            return refuse(Decision.REFUSED_BY_POLICY, found.reason, nobody_to_ask(found, mode, ctx), DO_NOT_RETRY)
        if too_long := too_long_to_ask(found.summary):  # the user is shown all of it, or nothing
            return refuse(Decision.REFUSED_BY_POLICY, too_long, f"refused without asking the user: {too_long}.")
        async with self._one_question():
            if self._granted(found):  # answered "always" while this call waited its turn
                return Ruling(Decision.APPROVED_BY_SESSION, found.reason)
            return await self._ask_user(name, found, ctx)

    async def _outside_ruling(
        self, tool: Tool | str, arguments: Mapping[str, Any], ctx: ToolContext, reason: str
    ) -> Ruling:
        found = self.assess(tool, arguments)
        commands = found.classification.commands if found.classification is not None else ()
        keys = tuple(dict.fromkeys(OUTSIDE + outside_prefix(command) for command in commands))
        why = f"it failed in the sandbox ({reason})"
        if keys and all(key in self.grants for key in keys):
            return Ruling(Decision.OUTSIDE_BY_SESSION, why, outside=True)
        mode = self.effective_mode(ctx)
        if mode != "ask" or ctx.approve is None or not keys:
            hint = outside_hint(found, ctx)
            situation = (
                f"approval mode {mode} never runs a command outside the sandbox"
                if mode != "ask"
                else ("nobody can let it run outside the sandbox here")
            )
            return refuse(Decision.REFUSED_OUTSIDE, why, f"It stays refused: {situation}.{hint}")
        if too_long := too_long_to_ask(found.summary):
            return refuse(Decision.REFUSED_OUTSIDE, too_long, f"It stays refused, without asking the user: {too_long}.")
        async with self._one_question():
            if all(key in self.grants for key in keys):
                return Ruling(Decision.OUTSIDE_BY_SESSION, why, outside=True)
            prefixes = ", ".join(f"`{key.removeprefix(OUTSIDE)} …`" for key in keys)
            risk = f"; {found.reason}" if found.reason else ""  # what a yes approves besides
            request = PolicyRequest(
                task_id=ctx.task_id,
                tool=name_of(tool),
                summary=found.summary,
                reason=f"{reason}{risk}",  # one line of why: the question says it runs with the user's full rights
                always=f"{prefixes} outside the sandbox",
                outside=True,
                opaque=found.risk is Risk.OPAQUE,
                programs=programs_of(found),
            )
            answer = await answer_of(ctx, request)
            if isinstance(answer, str):
                return refuse(Decision.REFUSED_OUTSIDE, answer, f"It stays refused: {answer}.")
        if answer.allowed:
            if answer.how == "session":
                self.grants.update(keys)
                self.grants.update(found.grant_keys)  # and approved when it runs outside next time
            always = " (always, this session)" if answer.how == "session" else ""
            return Ruling(Decision.OUTSIDE_BY_USER, why + always, outside=True)
        said = answer.reason.strip()
        message = "The user chose not to run it outside the sandbox" + (f": {said}" if said else "")
        return refuse(Decision.REFUSED_OUTSIDE, said or "the user said no", f"{message}.")

    async def _ask_user(self, tool: str, found: Assessment, ctx: ToolContext) -> Ruling:
        assert ctx.approve is not None
        request = PolicyRequest(
            task_id=ctx.task_id,
            tool=tool,
            summary=found.summary,
            reason=found.reason,
            always=found.always_label,
            opaque=found.risk is Risk.OPAQUE,
            programs=programs_of(found),
        )
        answer = await answer_of(ctx, request)
        if isinstance(answer, str):
            return refuse(Decision.REFUSED_BY_USER, answer, f"refused: {answer}.", DO_NOT_RETRY)
        if answer.allowed:
            always = answer.how == "session"
            if always:
                self.grants.update(found.grant_keys)
            return Ruling(Decision.APPROVED_BY_USER, found.reason + (" (always, this session)" if always else ""))
        why = answer.reason.strip()
        message = "refused by the user" + (f": {why}" if why else "") + "."
        return refuse(Decision.REFUSED_BY_USER, why or "the user said no", message, DO_NOT_RETRY)

    def _granted(self, found: Assessment) -> bool:
        return bool(found.grant_keys) and all(key in self.grants for key in found.grant_keys)
