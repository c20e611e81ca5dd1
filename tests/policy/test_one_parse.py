"""A command line is parsed once: the approval policy (deny rules, hard denylist, classifier) and
execute_command's own denylist check all walk the same tree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paicli.llm.types import ToolCall
from paicli.policy.approval import ApprovalPolicy
from paicli.policy.rules import Rules
from paicli.shell import parse
from paicli.tools.base import ToolContext
from paicli.tools.toolbox import ToolBox


class ParseCounter:
    """Wraps the grammar call and records the text of every parse."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.real = parse.grammar_parse

    def __call__(self, data: bytes):  # type: ignore[no-untyped-def]
        self.texts.append(data.decode())
        return self.real(data)


@pytest.fixture
def counter(monkeypatch: pytest.MonkeyPatch) -> ParseCounter:
    parse._parse_nested.cache_clear()
    spy = ParseCounter()
    monkeypatch.setattr(parse, "grammar_parse", spy)
    return spy


@pytest.mark.parametrize(
    ("command", "parses"),
    [
        ("ls -la | grep -n x; echo done", 1),
        ("echo 'one parse' && cat <<'EOF'\nbody\nEOF", 1),
        ("bash -c 'touch made'", 2),  # the command line, then the code handed to bash
    ],
)
async def test_admit_and_run_parse_each_text_once(
    workspace: Path, counter: ParseCounter, command: str, parses: int
) -> None:
    policy = ApprovalPolicy(workspace, mode="yolo", rules=Rules(deny=["git push"], workspace=workspace))
    box = ToolBox.default(gate=policy)
    counter.texts.clear()  # the deny rule was read as a command too
    call = ToolCall(id="c1", name="execute_command", arguments=json.dumps({"command": command}))
    outcome = await box.execute(call, ToolContext(workspace, command_timeout=20))
    assert outcome.ok, outcome.output
    assert len(counter.texts) == parses, counter.texts
    assert len(set(counter.texts)) == parses
