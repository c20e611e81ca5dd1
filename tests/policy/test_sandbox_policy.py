"""Ask less, safely: with commands contained by the sandbox, those that would only ask because they write
or run project code run unasked; those that destroy work still ask (refused in auto); `unsandboxed`
commands and those the user let out are judged as without a sandbox; a command the sandbox stopped runs
outside only with the user's yes. The sandbox here is a real BwrapSandbox object the policy only looks
at (tests/sandbox runs it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from paicli.policy.approval import ApprovalPolicy, Decision, Mode
from paicli.policy.rules import Rules
from paicli.sandbox import BwrapSandbox
from paicli.tools.base import ToolContext
from tests.policy.test_approval import ALWAYS, YES, ScriptedUser, no

COMMAND = "execute_command"


def policy_for(workspace: Path, mode: Mode, *, unsandboxed: tuple[str, ...] = (), **rules: list[str]) -> ApprovalPolicy:
    return ApprovalPolicy(workspace, mode=mode, rules=Rules(**rules, workspace=workspace), unsandboxed=unsandboxed)


def contained(workspace: Path, user: ScriptedUser | None = None) -> ToolContext:
    return ToolContext(workspace, approve=user, sandbox=BwrapSandbox("/usr/bin/bwrap", workspace.parent / "home"))


async def decide(policy: ApprovalPolicy, command: str, ctx: ToolContext) -> Decision:
    return (await policy.decide(COMMAND, {"command": command}, ctx)).decision


@pytest.mark.parametrize(
    "command",
    [
        "pytest -q",
        "make",
        "python app.py",
        "npm test",
        "echo x > build.log",
        "pip install -e .",
        "echo x > ~/.bashrc",
        "CI=1 make test",
    ],
)
@pytest.mark.parametrize("mode", ["ask", "auto"])
async def test_commands_that_would_only_ask_run_unasked_in_the_sandbox(
    workspace: Path, mode: Mode, command: str
) -> None:
    user = ScriptedUser()
    assert await decide(policy_for(workspace, mode), command, contained(workspace, user)) is Decision.ALLOWED_IN_SANDBOX
    assert user.asked == []


async def test_without_a_sandbox_they_ask_as_before(workspace: Path) -> None:
    decision = await decide(policy_for(workspace, "auto"), "pytest -q", ToolContext(workspace))
    assert decision is Decision.REFUSED_BY_POLICY


@pytest.mark.parametrize(
    "command",
    [
        "rm -r build",
        "git clean -fdx",
        "git reset --hard HEAD~1",
        "find . -delete",
        "ls | xargs rm",
        "git checkout -- .",
        "timeout 5 rm -f a.txt",
        "pytest && rm -rf dist",
    ],
)
async def test_commands_that_destroy_work_still_ask_and_auto_refuses_them(workspace: Path, command: str) -> None:
    user = ScriptedUser(YES)
    assert await decide(policy_for(workspace, "ask"), command, contained(workspace, user)) is Decision.APPROVED_BY_USER
    assert len(user.asked) == 1
    refused = await policy_for(workspace, "auto").decide(COMMAND, {"command": command}, contained(workspace))
    assert refused.decision is Decision.REFUSED_BY_POLICY and "approval mode is auto" in refused.message
    allowed = policy_for(workspace, "auto", allow=["rm", "git", "find", "xargs", "timeout", "pytest"])
    assert await decide(allowed, command, contained(workspace)) is Decision.APPROVED_BY_RULE


@pytest.mark.parametrize(
    "command",
    [
        "cat /etc/hostname",
        "cat ~/.config/tool/token",
        "grep -r key ~/.kube",
        "cd .. && ls",
        "head -c 100 /proc/self/environ",
        "cat < ../secret",
    ],
)
async def test_commands_that_read_outside_the_workspace_still_ask(workspace: Path, command: str) -> None:
    """What a command reads reaches the model: the sandbox hides the usual secrets, not every file."""
    user = ScriptedUser(YES)
    assert await decide(policy_for(workspace, "ask"), command, contained(workspace, user)) is Decision.APPROVED_BY_USER
    assert await decide(policy_for(workspace, "auto"), command, contained(workspace)) is Decision.REFUSED_BY_POLICY


async def test_opaque_and_denied_commands_are_not_relaxed(workspace: Path) -> None:
    assert await decide(policy_for(workspace, "yolo"), "$(echo rm) -rf x", contained(workspace)) is (
        Decision.REFUSED_BY_POLICY
    )
    policy = policy_for(workspace, "yolo", deny=["pytest"])
    assert await decide(policy, "rm -rf /", contained(workspace)) is Decision.REFUSED_BY_DENYLIST
    assert await decide(policy, "pytest -q", contained(workspace)) is Decision.REFUSED_BY_RULE


async def test_unsandboxed_commands_run_outside_and_are_judged_as_without_a_sandbox(workspace: Path) -> None:
    policy = policy_for(workspace, "auto", unsandboxed=("git push",))
    ruling = await policy.decide(COMMAND, {"command": "git add -A && git push origin main"}, contained(workspace))
    assert ruling.decision is Decision.REFUSED_BY_POLICY  # outside, git push needs the user's yes
    allowed = policy_for(workspace, "auto", unsandboxed=("git push",), allow=["git push", "git add"])
    ruling = await allowed.decide(COMMAND, {"command": "git add -A && git push origin main"}, contained(workspace))
    assert ruling.decision is Decision.APPROVED_BY_RULE and ruling.outside
    admission = await allowed.admit(COMMAND, {"command": "git push origin main"}, contained(workspace))
    assert admission.refusal is None and admission.outside
    inside = await allowed.admit(COMMAND, {"command": "git status"}, contained(workspace))
    assert inside.refusal is None and not inside.outside


def test_unsandboxed_must_be_command_prefixes(workspace: Path) -> None:
    with pytest.raises(ValueError, match="not a command prefix"):
        policy_for(workspace, "ask", unsandboxed=("write_file(src/*)",))


@pytest.mark.parametrize("mode", ["auto", "yolo"])
async def test_a_command_the_sandbox_stopped_stays_refused_in_auto_and_yolo(workspace: Path, mode: Mode) -> None:
    policy = policy_for(workspace, mode)
    note = await policy.escalate(COMMAND, {"command": "git commit -m x"}, contained(workspace), "a write was refused")
    assert note is not None and f"approval mode {mode} never runs a command outside the sandbox" in note
    assert 'unsandboxed = ["git commit"]' in note


async def test_in_ask_mode_the_user_may_run_it_once_outside(workspace: Path) -> None:
    user = ScriptedUser(YES, no("not now"))
    policy, ctx = policy_for(workspace, "ask"), contained(workspace, user)
    arguments = {"command": "git commit -m x"}
    assert await policy.escalate(COMMAND, arguments, ctx, "a write was refused") is None
    request = user.asked[0]
    assert getattr(request, "outside", False) and "a write was refused" in request.reason
    assert getattr(request, "always", "") == "`git commit …` outside the sandbox"
    note = await policy.escalate(COMMAND, arguments, ctx, "a write was refused")
    assert note is not None and "chose not to run it outside the sandbox: not now" in note
    assert not (await policy.admit(COMMAND, arguments, ctx)).outside  # a yes was for once


async def test_always_lets_that_command_prefix_run_outside_for_the_session(workspace: Path) -> None:
    user = ScriptedUser(ALWAYS)
    policy, ctx = policy_for(workspace, "ask"), contained(workspace, user)
    assert await policy.escalate(COMMAND, {"command": "git commit -m one"}, ctx, "a write was refused") is None
    admission = await policy.admit(COMMAND, {"command": "git commit -m two"}, ctx)
    assert admission.refusal is None and admission.outside and len(user.asked) == 1
    assert await policy.escalate(COMMAND, {"command": "git commit -m three"}, ctx, "x") is None  # no question
    assert not (await policy.admit(COMMAND, {"command": "make"}, ctx)).outside


async def test_a_deny_rule_wins_over_unsandboxed(workspace: Path) -> None:
    policy = policy_for(workspace, "yolo", unsandboxed=("git push",), deny=["git push"])
    admission = await policy.admit(COMMAND, {"command": "git push"}, contained(workspace))
    assert admission.refusal is not None and "deny rule" in admission.refusal


@pytest.mark.parametrize("command", ["echo > .env", ": > data/big.bin", "python3 x.py >| .env", "cat a &> .env"])
async def test_cutting_a_file_undo_cannot_restore_asks_even_in_the_sandbox(workspace: Path, command: str) -> None:
    (workspace / ".gitignore").write_text(".env\n")
    (workspace / ".env").write_text("API=1\n")
    (workspace / "data").mkdir()
    (workspace / "data" / "big.bin").write_bytes(b"0" * 6_000_000)
    user = ScriptedUser(YES)
    assert await decide(policy_for(workspace, "ask"), command, contained(workspace, user)) is Decision.APPROVED_BY_USER
    assert "undo cannot bring it back" in user.asked[0].reason
    assert await decide(policy_for(workspace, "auto"), command, contained(workspace)) is Decision.REFUSED_BY_POLICY


@pytest.mark.parametrize("command", ["echo > notes.txt", "echo >> .env", "echo > new.txt"])
async def test_writes_undo_covers_still_run_unasked_in_the_sandbox(workspace: Path, command: str) -> None:
    (workspace / ".gitignore").write_text(".env\n")
    (workspace / ".env").write_text("API=1\n")
    (workspace / "notes.txt").write_text("tracked or not, small and not ignored\n")
    assert await decide(policy_for(workspace, "auto"), command, contained(workspace)) is Decision.ALLOWED_IN_SANDBOX


OVERSIZE = [
    "git commit -m x # " + "x" * 20_000,  # characters
    "git commit -m x\n" * 501,  # lines, each short
    "git commit -m x" + " " * 20_000,  # blanks count too
    "git commit -m 'tests'" + " ." * 10_000 + "\n" * 40 + "git push",  # a payload below the fold
]


@pytest.mark.parametrize("command", OVERSIZE)
async def test_running_outside_refuses_a_command_too_large_to_show_like_the_normal_question(
    workspace: Path, command: str
) -> None:
    user = ScriptedUser(YES)
    policy, ctx = policy_for(workspace, "ask"), contained(workspace, user)
    note = await policy.escalate(COMMAND, {"command": command}, ctx, "a write was refused")
    assert note is not None and "It stays refused, without asking the user" in note and user.asked == []
    assert "20,000 characters and 500 lines" in note and "write_file" in note
    # the same text without a sandbox, through the normal question: refused alike, nobody asked
    normal = await policy.decide(COMMAND, {"command": command}, ToolContext(workspace, approve=user))
    assert normal.decision is Decision.REFUSED_BY_POLICY and user.asked == []


async def test_running_outside_still_asks_at_the_size_limit(workspace: Path) -> None:
    user = ScriptedUser(YES)
    policy, ctx = policy_for(workspace, "ask"), contained(workspace, user)
    command = "git commit -m x #" + "x" * (20_000 - 17)
    assert await policy.escalate(COMMAND, {"command": command}, ctx, "a write was refused") is None
    assert user.asked[0].summary == command and getattr(user.asked[0], "outside", False)
