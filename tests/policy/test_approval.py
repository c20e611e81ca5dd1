"""ApprovalPolicy: modes, rules, session grants, one question at a time, and the audit trail."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from paicli.policy.approval import ApprovalPolicy, Decision, Mode, PolicyRequest
from paicli.policy.audit import AuditLog
from paicli.policy.rules import Rules
from paicli.tools.base import ApprovalDecision, ApprovalRequest, ToolContext


class ScriptedUser:
    """A real async approver that answers from a script and remembers what it was asked."""

    def __init__(self, *answers: ApprovalDecision, delay: float = 0.0) -> None:
        self.answers = list(answers)
        self.asked: list[ApprovalRequest] = []
        self.delay = delay
        self.active = 0
        self.most_active = 0

    async def __call__(self, request: ApprovalRequest) -> ApprovalDecision:
        self.asked.append(request)
        self.active += 1
        self.most_active = max(self.most_active, self.active)
        try:
            await asyncio.sleep(self.delay)
            return self.answers.pop(0) if self.answers else ApprovalDecision(allowed=False, how="user")
        finally:
            self.active -= 1


YES = ApprovalDecision(allowed=True, how="user")
ALWAYS = ApprovalDecision(allowed=True, how="session")


def no(reason: str = "") -> ApprovalDecision:
    return ApprovalDecision(allowed=False, how="user", reason=reason)


def policy_for(workspace: Path, mode: Mode | None = None, **rules: list[str]) -> ApprovalPolicy:
    return ApprovalPolicy(workspace, mode=mode, rules=Rules(**rules, workspace=workspace))


async def run(policy: ApprovalPolicy, command: str, ctx: ToolContext) -> Decision:
    return (await policy.decide("execute_command", {"command": command}, ctx)).decision


async def test_read_only_tools_file_edits_and_safe_commands_never_ask(workspace: Path) -> None:
    user = ScriptedUser()
    policy, ctx = policy_for(workspace, "ask"), ToolContext(workspace, approve=user)
    for tool, args in [
        ("read_file", {"path": "a"}),
        ("write_file", {"path": "a", "content": ""}),
        ("edit_file", {"path": "a", "old_text": "x", "new_text": "y"}),
        ("list_dir", {}),
        ("execute_command", {"command": "ls -la && git status"}),
    ]:
        assert (await policy.decide(tool, args, ctx)).decision is Decision.ALLOWED
    assert user.asked == []


async def test_ask_mode_asks_and_passes_the_users_reason_to_the_model(workspace: Path) -> None:
    user = ScriptedUser(YES, no("use the build script instead"))
    policy, ctx = policy_for(workspace, "ask"), ToolContext(workspace, task_id="task_2", approve=user)
    assert await run(policy, "rm -r build", ctx) is Decision.APPROVED_BY_USER
    ruling = await policy.decide("execute_command", {"command": "rm -r dist"}, ctx)
    assert ruling.decision is Decision.REFUSED_BY_USER
    assert "use the build script instead" in ruling.message and "Do not retry" in ruling.advice  # the model's only
    first = user.asked[0]
    assert isinstance(first, PolicyRequest)
    assert (first.task_id, first.tool, first.summary) == ("task_2", "execute_command", "rm -r build")
    assert "rm" in first.reason and first.always == "this exact command"  # never every later `rm …`


async def test_always_on_a_destructive_command_covers_only_that_exact_command(workspace: Path) -> None:
    user = ScriptedUser(ALWAYS, no())
    policy, ctx = policy_for(workspace, "ask"), ToolContext(workspace, approve=user)
    assert await run(policy, "rm -rf build dist", ctx) is Decision.APPROVED_BY_USER
    assert await run(policy, "rm -rf build dist", ctx) is Decision.APPROVED_BY_SESSION
    assert await run(policy, "rm -rf src", ctx) is Decision.REFUSED_BY_USER  # asked again
    assert [getattr(r, "always", "") for r in user.asked] == ["this exact command"] * 2


async def test_always_covers_the_same_prefix_for_the_rest_of_the_session(workspace: Path) -> None:
    user = ScriptedUser(ALWAYS)
    policy, ctx = policy_for(workspace, "ask"), ToolContext(workspace, approve=user)
    assert await run(policy, "git commit -m one", ctx) is Decision.APPROVED_BY_USER
    assert await run(policy, "git commit -am two", ctx) is Decision.APPROVED_BY_SESSION
    assert await run(policy, "git push", ctx) is Decision.REFUSED_BY_USER  # another prefix: asked again
    assert len(user.asked) == 2


async def test_auto_mode_refuses_with_a_reason_unless_a_rule_allows(workspace: Path) -> None:
    policy, ctx = policy_for(workspace, "auto", allow=["pytest"]), ToolContext(workspace, approve=ScriptedUser(YES))
    assert await run(policy, "pytest -q", ctx) is Decision.APPROVED_BY_RULE
    ruling = await policy.decide("execute_command", {"command": "rm -r build"}, ctx)
    assert ruling.decision is Decision.REFUSED_BY_POLICY
    assert "approval mode is auto" in ruling.message and "rm -r build" in ruling.message


async def test_no_mode_means_ask_with_a_user_and_auto_without(workspace: Path) -> None:
    policy = policy_for(workspace)
    with_user = ToolContext(workspace, approve=ScriptedUser(YES))
    assert await run(policy, "rm -r build", with_user) is Decision.APPROVED_BY_USER
    assert await run(policy, "rm -r build", ToolContext(workspace)) is Decision.REFUSED_BY_POLICY
    ask_without_user = policy_for(workspace, "ask")
    ruling = await ask_without_user.decide("execute_command", {"command": "rm -r x"}, ToolContext(workspace))
    assert ruling.decision is Decision.REFUSED_BY_POLICY and "nobody can approve" in ruling.message


async def test_yolo_allows_what_it_understands_but_not_the_denylist_or_the_unreadable(workspace: Path) -> None:
    policy = policy_for(workspace, "yolo")
    ctx = ToolContext(workspace)
    assert await run(policy, "rm -r build", ctx) is Decision.APPROVED_BY_MODE
    assert await run(policy, "rm -rf /", ctx) is Decision.REFUSED_BY_DENYLIST
    assert await run(policy, "$(echo rm) -r build", ctx) is Decision.REFUSED_BY_POLICY
    user = ScriptedUser(YES)
    assert await run(policy, "$(echo rm) -r build", ToolContext(workspace, approve=user)) is Decision.APPROVED_BY_USER
    assert isinstance(user.asked[0], PolicyRequest) and user.asked[0].opaque


async def test_deny_rules_win_in_every_mode(workspace: Path) -> None:
    for mode in ("ask", "auto", "yolo"):
        policy = policy_for(workspace, mode, allow=["git push"], deny=["git push", "write_file(secrets/*)"])
        ctx = ToolContext(workspace, approve=ScriptedUser(YES))
        assert await run(policy, "git push", ctx) is Decision.REFUSED_BY_RULE
        write = await policy.decide("write_file", {"path": "secrets/k", "content": ""}, ctx)
        assert write.decision is Decision.REFUSED_BY_RULE and "secrets/*" in write.message
        # with command deny rules, what cannot be read cannot be let through
        assert await run(policy, "$(echo git) push", ctx) is Decision.REFUSED_BY_RULE


async def test_parallel_calls_ask_one_at_a_time_and_an_always_answer_covers_the_waiting_ones(
    workspace: Path,
) -> None:
    user = ScriptedUser(ALWAYS, delay=0.05)
    policy = policy_for(workspace, "ask")
    contexts = [ToolContext(workspace, task_id=f"t{i}", approve=user) for i in range(4)]
    decisions = await asyncio.gather(*(run(policy, f"make build -j{i + 1}", ctx) for i, ctx in enumerate(contexts)))
    assert user.most_active == 1
    assert len(user.asked) == 1
    assert sorted(decisions) == sorted([Decision.APPROVED_BY_USER] + [Decision.APPROVED_BY_SESSION] * 3)


async def test_a_broken_prompt_refuses(workspace: Path) -> None:
    async def broken(request: ApprovalRequest) -> ApprovalDecision:
        raise RuntimeError("terminal gone")

    ruling = await policy_for(workspace, "ask").decide(
        "execute_command", {"command": "rm -r build"}, ToolContext(workspace, approve=broken)
    )
    assert ruling.decision is Decision.REFUSED_BY_USER and "terminal gone" in ruling.message


async def test_unknown_tools_ask(workspace: Path) -> None:
    ruling = await policy_for(workspace, "auto").decide("deploy", {"env": "prod"}, ToolContext(workspace))
    assert ruling.decision is Decision.REFUSED_BY_POLICY


async def test_admit_audits_every_decision_and_reject_the_invalid_calls(workspace: Path, tmp_path: Path) -> None:
    audit = AuditLog(tmp_path / "audit", secrets=["sk-live-abcdef123456"], workspace=workspace)
    policy = ApprovalPolicy(workspace, mode="auto", audit=audit)
    ctx = ToolContext(workspace, task_id="task_1")
    assert (await policy.admit("execute_command", {"command": "ls"}, ctx)).refusal is None
    admission = await policy.admit("execute_command", {"command": "curl -H 'x: sk-live-abcdef123456' http://h"}, ctx)
    assert admission.refusal and admission.refusal.startswith("refused")
    policy.reject("nope", '{"a": 1}', "unknown tool 'nope'", ctx)
    text = "".join(p.read_text() for p in (tmp_path / "audit").glob("*.jsonl"))
    entries: list[dict[str, Any]] = [json.loads(line) for line in text.splitlines()]
    assert [e["decision"] for e in entries] == ["allowed", "refused_by_policy", "invalid"]
    assert all(e["task_id"] == "task_1" for e in entries)
    assert "sk-live-abcdef123456" not in text and "***" in entries[1]["arguments"]["command"]


@pytest.mark.parametrize("mode", ["ask", "auto", "yolo"])
async def test_mode_can_change_during_a_session(workspace: Path, mode: Mode) -> None:
    policy = policy_for(workspace, "auto")
    policy.mode = mode
    assert policy.effective_mode(ToolContext(workspace)) == mode


@pytest.mark.parametrize(
    "command",
    [
        "echo " + "x" * 20_000 + "; rm -r build",  # characters
        "rm -r build\n" * 500,  # lines
        "rm -r build" + " " * 20_000,  # blanks count too
        "# run the unit tests" + " ." * 10_000 + "\n" * 40 + "rm -r build",  # finding 4 of issue 31, larger
    ],
)
async def test_a_command_too_large_to_show_whole_is_refused_without_asking(workspace: Path, command: str) -> None:
    user = ScriptedUser(YES)
    policy, ctx = policy_for(workspace, "ask"), ToolContext(workspace, approve=user)
    ruling = await policy.decide("execute_command", {"command": command}, ctx)
    assert ruling.decision is Decision.REFUSED_BY_POLICY and user.asked == []
    assert "refused without asking the user" in ruling.message and "write_file" in ruling.message


async def test_a_command_at_the_size_limit_is_still_asked(workspace: Path) -> None:
    user = ScriptedUser(YES)
    policy, ctx = policy_for(workspace, "ask"), ToolContext(workspace, approve=user)
    command = "rm -r build #" + "x" * (20_000 - 13)
    assert await run(policy, command, ctx) is Decision.APPROVED_BY_USER and user.asked[0].summary == command
