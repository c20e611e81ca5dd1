"""ApprovalPolicy: decides every tool call before it runs (allow, ask the user, refuse) and audits it.

The order of the checks, first match wins:
 0. outside the plan task's scope (its type, its `files`)    → refused_out_of_scope (every mode)
 1. a deny rule from the configuration                       → refused_by_rule     (every mode)
 1b. a file write on a git-controlled path (policy/git_guard.py) → asks the user     (every mode)
 2. the hard denylist (rm -rf /, curl | sh, mkfs, ...)        → refused_by_denylist (every mode)
 3. nothing risky (read-only tools, file edits in the workspace, read-only commands) → allowed
 3b. a command that runs in the sandbox and would only ask     → allowed_in_sandbox  (every mode)
     because it writes or runs project code (not one that destroys work: rm, git clean, ...;
     nor one that reads outside the workspace: what it reads reaches the model)
 4. mode yolo, and paicli understood the command              → approved_by_mode
 5. allow rules covering every risky part                     → approved_by_rule
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
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import enum
import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from paicli.common.shown import too_long_to_ask
from paicli.policy.audit import AuditLog
from paicli.policy.classify import Classification, Risk, classify_command, command_prefix
from paicli.policy.git_guard import GitPathsMemo, git_write_reason, keep_reason
from paicli.policy.reach import beyond, changes_environment
from paicli.policy.rules import Rule, Rules, parse_command_prefixes, starts_with
from paicli.policy.scope import out_of_scope
from paicli.tools.base import (
    DO_NOT_RETRY,
    Admission,
    ApprovalDecision,
    ApprovalRequest,
    Effect,
    Tool,
    ToolContext,
)
from paicli.tools.toolbox import builtin_tool

Mode = Literal["ask", "auto", "yolo"]
MODES: tuple[Mode, ...] = ("ask", "auto", "yolo")
USER_CONFIG = "~/.paicli/config.toml"  # the user's own config: it needs no trust


class Decision(enum.StrEnum):
    ALLOWED = "allowed"
    ALLOWED_IN_SANDBOX = "allowed_in_sandbox"  # would ask, but runs contained by the sandbox
    APPROVED_BY_USER = "approved_by_user"
    APPROVED_BY_RULE = "approved_by_rule"
    APPROVED_BY_SESSION = "approved_by_session"
    APPROVED_BY_MODE = "approved_by_mode"
    REFUSED_BY_POLICY = "refused_by_policy"
    REFUSED_BY_USER = "refused_by_user"
    REFUSED_BY_RULE = "refused_by_rule"
    REFUSED_BY_DENYLIST = "refused_by_denylist"
    REFUSED_OUT_OF_SCOPE = "refused_out_of_scope"  # outside what the plan task declared (the plan contract)
    OUTSIDE_BY_USER = "outside_by_user"  # failed in the sandbox; the user let it run once outside
    OUTSIDE_BY_SESSION = "outside_by_session"  # the same, by an "always" answer given earlier
    REFUSED_OUTSIDE = "refused_outside"  # failed in the sandbox and may not run outside
    INVALID = "invalid"  # never decided: unknown tool or arguments that do not validate

    @property
    def allowed(self) -> bool:
        return self in _ALLOWING


_ALLOWING = {
    Decision.ALLOWED,
    Decision.ALLOWED_IN_SANDBOX,
    Decision.APPROVED_BY_USER,
    Decision.APPROVED_BY_RULE,
    Decision.APPROVED_BY_SESSION,
    Decision.APPROVED_BY_MODE,
    Decision.OUTSIDE_BY_USER,
    Decision.OUTSIDE_BY_SESSION,
}
OUTSIDE = "outside:"  # grant keys of commands the user let run outside the sandbox


@dataclass(frozen=True)
class Ruling:
    decision: Decision
    reason: str = ""  # for the audit log: why it needed approval, or which rule decided
    message: str = ""  # for the model, when refused; also what the user sees of the refusal
    advice: str = ""  # for the model only, after the message: what to do about it (DO_NOT_RETRY)
    outside: bool = False  # a command that runs outside the sandbox

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
    outside: bool = False  # the question is whether to run it outside the sandbox, where it failed
    programs: tuple[str, ...] = ()  # what the command starts, as the classifier reads it (policy/risk.py)


class ApprovalPolicy:
    def __init__(
        self,
        workspace: Path,
        *,
        mode: Mode | None = None,
        rules: Rules | None = None,
        audit: AuditLog | None = None,
        unsandboxed: tuple[str, ...] | list[str] = (),
    ) -> None:
        self.workspace = workspace
        self.mode: Mode | None = mode
        self.rules = rules or Rules(workspace=workspace)
        self.audit = audit
        self.unsandboxed: tuple[Rule, ...] = parse_command_prefixes(unsandboxed)
        self.grants: set[str] = set()
        self._asking = asyncio.Lock()
        self.waiting = 0  # questions queued behind the one being asked (the prompt shows "2 more waiting")
        self.git_paths = GitPathsMemo(workspace)

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
            facts = _facts(tool)
            command = arguments.get(facts.command_argument) if facts and facts.command_argument else None
            programs = classify_command(command, self.workspace).programs if isinstance(command, str) else None
            self.audit.record(
                tool=_name(tool),
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
            return _refuse(Decision.REFUSED_BY_POLICY, found.reason, _nobody_to_ask(found, mode, ctx), DO_NOT_RETRY)
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
        """What the call is, from the tool's own facts (a name is looked up among the built-in tools)."""
        name, facts = _name(tool), _facts(tool)
        if facts is not None and (facts.effect is Effect.READ or (facts.effect is Effect.WRITE and facts.confined)):
            # reads, and writes the workspace guard confines (.git and .paicli protected): nothing to ask
            return Assessment(Risk.SAFE, "", _path_summary(facts, arguments))
        if facts is None or facts.command_argument is None:
            why = f"{name} is not a built-in tool" if facts is None else f"{name} can change things"
            return Assessment(
                Risk.ASK,
                why,
                f"{name} {dict(arguments)}",
                grant_keys=(f"tool:{name}",),
                always_label=f"every {name} call",
            )
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
            return _refuse(
                Decision.REFUSED_BY_RULE,
                f"deny rule {rule.text!r}",
                f"refused by the deny rule {rule.text!r} in the configuration.",
                DO_NOT_RETRY,
            )
        why = git_write_reason(facts, arguments, self.workspace, ctx.scope, self.git_paths)
        if why or facts is None or not facts.confined:
            self.git_paths.forget()  # a command, an MCP call or this write may change what git reads
        if why:
            return await self._ask_in_every_mode(name, dataclasses.replace(found, risk=Risk.ASK, reason=why), ctx)
        if found.risk is Risk.DENY:
            return _refuse(Decision.REFUSED_BY_DENYLIST, found.reason, f"refused: {found.reason}.", DO_NOT_RETRY)
        if found.risk is Risk.OPAQUE and found.classification is not None and self.rules.denies_commands:
            reason = f"{found.reason}, so it cannot be checked against the deny rules"
            return _refuse(Decision.REFUSED_BY_RULE, reason, f"refused: {reason}. Write the command out plainly.")
        outside = self.runs_outside(found, ctx)
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
        return all(OUTSIDE + _prefix(command) in self.grants for command in commands)

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
        if found.risk is Risk.ASK and ctx.sandbox is not None and not outside and _contained(found.classification):
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
            return _refuse(Decision.REFUSED_BY_POLICY, found.reason, _nobody_to_ask(found, mode, ctx), DO_NOT_RETRY)
        if too_long := too_long_to_ask(found.summary):  # the user is shown all of it, or nothing
            return _refuse(Decision.REFUSED_BY_POLICY, too_long, f"refused without asking the user: {too_long}.")
        async with self._one_question():
            if self._granted(found):  # answered "always" while this call waited its turn
                return Ruling(Decision.APPROVED_BY_SESSION, found.reason)
            return await self._ask_user(name, found, ctx)

    async def _outside_ruling(
        self, tool: Tool | str, arguments: Mapping[str, Any], ctx: ToolContext, reason: str
    ) -> Ruling:
        found = self.assess(tool, arguments)
        commands = found.classification.commands if found.classification is not None else ()
        keys = tuple(dict.fromkeys(OUTSIDE + _prefix(command) for command in commands))
        why = f"it failed in the sandbox ({reason})"
        if keys and all(key in self.grants for key in keys):
            return Ruling(Decision.OUTSIDE_BY_SESSION, why, outside=True)
        mode = self.effective_mode(ctx)
        if mode != "ask" or ctx.approve is None or not keys:
            hint = _outside_hint(found, ctx)
            situation = (
                f"approval mode {mode} never runs a command outside the sandbox"
                if mode != "ask"
                else ("nobody can let it run outside the sandbox here")
            )
            return _refuse(Decision.REFUSED_OUTSIDE, why, f"It stays refused: {situation}.{hint}")
        if too_long := too_long_to_ask(found.summary):
            return _refuse(
                Decision.REFUSED_OUTSIDE, too_long, f"It stays refused, without asking the user: {too_long}."
            )
        async with self._one_question():
            if all(key in self.grants for key in keys):
                return Ruling(Decision.OUTSIDE_BY_SESSION, why, outside=True)
            prefixes = ", ".join(f"`{key.removeprefix(OUTSIDE)} …`" for key in keys)
            risk = f"; {found.reason}" if found.reason else ""  # what a yes approves besides
            request = PolicyRequest(
                task_id=ctx.task_id,
                tool=_name(tool),
                summary=found.summary,
                reason=f"{reason}{risk}",  # one line of why: the question says it runs with the user's full rights
                always=f"{prefixes} outside the sandbox",
                outside=True,
                opaque=found.risk is Risk.OPAQUE,
                programs=_programs(found),
            )
            answer = await _answer(ctx, request)
            if isinstance(answer, str):
                return _refuse(Decision.REFUSED_OUTSIDE, answer, f"It stays refused: {answer}.")
        if answer.allowed:
            if answer.how == "session":
                self.grants.update(keys)
                self.grants.update(found.grant_keys)  # and approved when it runs outside next time
            always = " (always, this session)" if answer.how == "session" else ""
            return Ruling(Decision.OUTSIDE_BY_USER, why + always, outside=True)
        said = answer.reason.strip()
        message = "The user chose not to run it outside the sandbox" + (f": {said}" if said else "")
        return _refuse(Decision.REFUSED_OUTSIDE, said or "the user said no", f"{message}.")

    async def _ask_user(self, tool: str, found: Assessment, ctx: ToolContext) -> Ruling:
        assert ctx.approve is not None
        request = PolicyRequest(
            task_id=ctx.task_id,
            tool=tool,
            summary=found.summary,
            reason=found.reason,
            always=found.always_label,
            opaque=found.risk is Risk.OPAQUE,
            programs=_programs(found),
        )
        answer = await _answer(ctx, request)
        if isinstance(answer, str):
            return _refuse(Decision.REFUSED_BY_USER, answer, f"refused: {answer}.", DO_NOT_RETRY)
        if answer.allowed:
            always = answer.how == "session"
            if always:
                self.grants.update(found.grant_keys)
            return Ruling(Decision.APPROVED_BY_USER, found.reason + (" (always, this session)" if always else ""))
        why = answer.reason.strip()
        message = "refused by the user" + (f": {why}" if why else "") + "."
        return _refuse(Decision.REFUSED_BY_USER, why or "the user said no", message, DO_NOT_RETRY)

    def _granted(self, found: Assessment) -> bool:
        return bool(found.grant_keys) and all(key in self.grants for key in found.grant_keys)


def _programs(found: Assessment) -> tuple[str, ...]:
    return found.classification.programs if found.classification is not None else ()


def _refuse(decision: Decision, reason: str, message: str, advice: str = "") -> Ruling:
    return Ruling(decision, reason, message, advice)


def _nobody_to_ask(found: Assessment, mode: Mode, ctx: ToolContext) -> str:
    """The refusal when nobody may approve: why, and how to allow it where the run happens. Without a human
    (headless) a repository's own config counts only once trusted, so the advice names the user's own."""
    why = found.reason or "it needs approval"
    headless = ctx.approve is None
    if mode == "auto":
        situation = "approval mode is auto, so nothing that needs approval runs"
    else:
        situation = "nobody can approve it here (no terminal)"
    where = f"in {USER_CONFIG}, or run with --approval yolo" if headless else "in a config file, or /approval ask"
    hint = ""
    if found.risk is Risk.ASK and found.classification is not None:
        prefixes = [key.removeprefix("cmd:") for key in found.grant_keys if key.startswith("cmd:")]
        listed = ", ".join(json.dumps(prefix) for prefix in prefixes or [found.summary])
        hint = f" To allow such commands: allow = [{listed}] {where}."
    elif found.risk is Risk.ASK and (named := [k for k in found.grant_keys if k.startswith("tool:")]):
        tool = named[0].removeprefix("tool:")
        hint = f' To allow it: allow = ["{tool}"] {where}.'
    return f"refused: `{found.summary}` needs approval ({why}) and {situation}.{hint}"


def _contained(found: Classification | None) -> bool:
    """Whether the sandbox makes a command that asks harmless: it only writes or runs project code; it
    neither destroys work in the workspace nor reads outside it (what it reads reaches the model)."""
    return found is not None and not found.destructive and not found.reads_outside


def _outside_hint(found: Assessment, ctx: ToolContext) -> str:
    commands = found.classification.commands if found.classification is not None else ()
    prefixes = list(dict.fromkeys(_prefix(command) for command in commands))
    if not prefixes:
        return ""
    listed = ", ".join(json.dumps(p) for p in prefixes[:3])
    where = USER_CONFIG if ctx.approve is None else "a config file"  # headless: a repository's config needs trust
    return f" To let such commands run outside the sandbox: unsandboxed = [{listed}] in {where}."


def _prefix(command: tuple[str, ...]) -> str:
    """What an "always run outside" answer remembers of one simple command: `git commit`, `make`."""
    return command_prefix(command) or " ".join(command)


def _name(tool: Tool | str) -> str:
    return tool if isinstance(tool, str) else tool.name


def _facts(tool: Tool | str) -> Tool | None:
    """The tool itself; for a name, the built-in tool of that name (None: not a built-in tool)."""
    return builtin_tool(tool) if isinstance(tool, str) else tool


def _path_summary(tool: Tool, arguments: Mapping[str, Any]) -> str:
    path = arguments.get(tool.path_argument) if tool.path_argument else None
    return f"{tool.name} {path}" if isinstance(path, str) else tool.name


async def _answer(ctx: ToolContext, request: PolicyRequest) -> ApprovalDecision | str:
    """The user's answer, or why there is none: a broken prompt must refuse, never allow."""
    assert ctx.approve is not None
    try:
        return await ctx.approve(request)
    except asyncio.CancelledError:
        raise
    except Exception as error:
        return f"the approval prompt failed ({type(error).__name__}: {error})"
