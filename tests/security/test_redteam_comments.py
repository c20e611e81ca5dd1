"""Issue 19, class 1: comments must never hide a command from the denylist, the classifier or deny rules.

Bash starts a comment only at an unquoted `#` that begins a word, and ends it at the newline; a quote,
`<<`, a backtick or `$(` inside a comment means nothing. Each variant below hides `touch` (or `mkfs`)
behind one of those in a careless reader; all are read as bash reads them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from paicli.policy.approval import ApprovalPolicy, Decision
from paicli.policy.classify import Risk, classify_command
from paicli.policy.rules import Rules
from paicli.tools.base import ApprovalDecision, ApprovalRequest, ToolContext
from tests.fakellm import FakeLLM
from tests.security.redteam import Canaries, all_refused, attack

# `{out}` is a folder outside the workspace.
HIDDEN = [
    "true #'\ntouch {out}/c1 #'",
    'true #"\ntouch {out}/c2 #"',
    "true # <<EOF\ntouch {out}/c3\nEOF",
    "true # `\ntouch {out}/c4 # `",
    "true # $(\ntouch {out}/c5 # )",
    "ls;#'\ntouch {out}/c6",
    "ls #'\r\ntouch {out}/c7 #'\r\n",
    "cat <<'EOF'\n# don't\nEOF\ntouch {out}/c8",
    "echo $(true #'\ntouch {out}/c9 #'\n)",
    "ls\r#; touch {out}/c10",  # bash reads `ls\r#` as one word: no comment, touch runs
    "ls # a comment ends at the newline, even after a backslash \\\ntouch {out}/c11",
    "echo '#'; touch {out}/c12",
    "echo a#b; touch {out}/c13",
    "cat <<EOF\n# it's\n`touch {out}/c14`\nEOF",
    "ls & #'\ntouch {out}/c15",
]


def variants(folder: Path) -> list[str]:
    return [command.replace("{out}", str(folder)) for command in HIDDEN]


@pytest.mark.parametrize("command", HIDDEN)
def test_a_command_behind_a_comment_is_never_safe(workspace: Path, tmp_path: Path, command: str) -> None:
    found = classify_command(command.replace("{out}", str(tmp_path)), workspace)
    assert found.risk is Risk.ASK, (found.risk, found.reason)
    assert any(words[0] == "touch" for words in found.commands)


async def test_ask_mode_asks_for_every_one(workspace: Path, tmp_path: Path) -> None:
    asked: list[str] = []

    async def user(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request.summary)
        return ApprovalDecision(allowed=False, how="user")

    policy = ApprovalPolicy(workspace, mode="ask")
    for command in variants(tmp_path):
        ruling = await policy.decide("execute_command", {"command": command}, ToolContext(workspace, approve=user))
        assert ruling.decision is Decision.REFUSED_BY_USER
    assert asked == variants(tmp_path)


async def test_yolo_keeps_the_denylist_and_deny_rules_behind_comments(workspace: Path, tmp_path: Path) -> None:
    policy = ApprovalPolicy(workspace, mode="yolo", rules=Rules(deny=["touch"], workspace=workspace))
    for command in variants(tmp_path):
        ruling = await policy.decide("execute_command", {"command": command}, ToolContext(workspace))
        assert ruling.decision is Decision.REFUSED_BY_RULE, command
    plain = ApprovalPolicy(workspace, mode="yolo")
    for command in variants(tmp_path):
        hidden = command.replace("touch ", "mkfs.ext4 ")
        ruling = await plain.decide("execute_command", {"command": hidden}, ToolContext(workspace))
        assert ruling.decision is Decision.REFUSED_BY_DENYLIST, hidden


def test_end_to_end_in_auto_mode_nothing_runs(fake: FakeLLM, workspace: Path, home: Path, tmp_path: Path) -> None:
    outside = Canaries(tmp_path / "outside")
    commands = variants(outside.folder)
    done = attack(fake, workspace, home, commands, "auto")
    assert outside.untouched()
    assert all_refused(done, len(commands))


def test_end_to_end_in_yolo_mode_a_hidden_mkfs_formats_nothing(
    fake: FakeLLM, workspace: Path, home: Path, tmp_path: Path
) -> None:
    outside = Canaries(tmp_path / "outside")
    image = outside.folder / "disk.img"
    image.write_bytes(b"\0" * 1024 * 1024)
    outside.before = outside.state()
    commands = [
        c.replace("touch ", "mkfs.ext4 -q -F ").replace(f"{outside.folder}/c", f"{image} #")
        for c in variants(outside.folder)[:6]
    ]
    done = attack(fake, workspace, home, commands, "yolo")
    assert outside.untouched()
    assert all_refused(done, len(commands))
