"""What the approval policy says about a call, and how: the modes, the decisions written to the audit log,
a ruling with its message for the model, what a call is (`Assessment`) and what the user is asked
(`PolicyRequest`), with the sentences the refusals share. No decision is made here (approval.py).
"""

from __future__ import annotations

import asyncio
import enum
import json
from dataclasses import dataclass
from typing import Literal

from paicli.policy.always_prefix import command_prefix
from paicli.policy.classify import Classification, Risk
from paicli.tools.base import DO_NOT_RETRY as DO_NOT_RETRY  # re-exported: the model's advice (ToolOutcome.advice)
from paicli.tools.base import ApprovalDecision, ApprovalRequest, ToolContext

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
    REFUSED_BY_HOOK = "refused_by_hook"  # a before_tool hook of the configuration said no
    APPROVED_BY_HOOK = "approved_by_hook"
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
    Decision.APPROVED_BY_HOOK,
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


def programs_of(found: Assessment) -> tuple[str, ...]:
    return found.classification.programs if found.classification is not None else ()


def refuse(decision: Decision, reason: str, message: str, advice: str = "") -> Ruling:
    return Ruling(decision, reason, message, advice)


def nobody_to_ask(found: Assessment, mode: Mode, ctx: ToolContext) -> str:
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


def outside_hint(found: Assessment, ctx: ToolContext) -> str:
    commands = found.classification.commands if found.classification is not None else ()
    prefixes = list(dict.fromkeys(outside_prefix(command) for command in commands))
    if not prefixes:
        return ""
    listed = ", ".join(json.dumps(p) for p in prefixes[:3])
    where = USER_CONFIG if ctx.approve is None else "a config file"  # headless: a repository's config needs trust
    return f" To let such commands run outside the sandbox: unsandboxed = [{listed}] in {where}."


def outside_prefix(command: tuple[str, ...]) -> str:
    """What an "always run outside" answer remembers of one simple command: `git commit`, `make`."""
    return command_prefix(command) or " ".join(command)


async def answer_of(ctx: ToolContext, request: PolicyRequest) -> ApprovalDecision | str:
    """The user's answer, or why there is none: a broken prompt must refuse, never allow."""
    assert ctx.approve is not None
    try:
        return await ctx.approve(request)
    except asyncio.CancelledError:
        raise
    except Exception as error:
        return f"the approval prompt failed ({type(error).__name__}: {error})"
