"""Writes carry a unified diff of what they changed, for the display: through the tool box onto the outcome,
never into what the model sees; secrets in it are masked."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from paicli.llm.types import ToolCall
from paicli.tools.base import ToolContext, ToolOutcome
from paicli.tools.diff import MAX_DIFF_LINES, file_diff
from paicli.tools.toolbox import ToolBox


def run(box: ToolBox, ctx: ToolContext, name: str, **arguments: object) -> ToolOutcome:
    return asyncio.run(box.execute(ToolCall(id="c1", name=name, arguments=json.dumps(arguments)), ctx))


def test_an_edit_carries_its_diff_and_the_model_sees_only_the_sentence(workspace: Path) -> None:
    (workspace / "app.py").write_text("def add(a, b):\n    return a - b\n")
    outcome = run(
        ToolBox.default(),
        ToolContext(workspace=workspace),
        "edit_file",
        path="app.py",
        old_text="a - b",
        new_text="a + b",
    )
    assert outcome.ok and outcome.output == "edited app.py: replaced 1 line with 1 line"
    assert outcome.diff.splitlines() == [
        "--- a/app.py",
        "+++ b/app.py",
        "@@ -1,2 +1,2 @@",
        " def add(a, b):",
        "-    return a - b",
        "+    return a + b",
    ]


def test_a_created_file_diffs_against_nothing_and_a_replaced_one_against_what_it_held(workspace: Path) -> None:
    box, ctx = ToolBox.default(), ToolContext(workspace=workspace)
    created = run(box, ctx, "write_file", path="new.txt", content="one\ntwo\n")
    assert created.diff.splitlines()[:3] == ["--- /dev/null", "+++ b/new.txt", "@@ -0,0 +1,2 @@"]
    replaced = run(box, ctx, "write_file", path="new.txt", content="one\nthree\n")
    assert [line for line in replaced.diff.splitlines() if line[:1] in "+-"][2:] == ["-two", "+three"]
    unchanged = run(box, ctx, "write_file", path="new.txt", content="one\nthree\n")
    assert unchanged.diff == ""


def test_a_binary_file_replaced_has_no_diff(workspace: Path) -> None:
    (workspace / "blob.bin").write_bytes(b"\xff\xfe\x00")
    outcome = run(ToolBox.default(), ToolContext(workspace=workspace), "write_file", path="blob.bin", content="text")
    assert outcome.ok and outcome.diff == ""


def test_secrets_in_a_diff_are_masked(workspace: Path) -> None:
    ctx = ToolContext(workspace=workspace, secrets=["sk-secret-value-123"])
    outcome = run(ToolBox.default(), ctx, "write_file", path="env", content="KEY=sk-secret-value-123\n")
    assert "sk-secret-value-123" not in outcome.diff and "+KEY=***" in outcome.diff


def test_a_huge_diff_is_capped_and_says_how_much_more() -> None:
    diff = file_diff("big.txt", None, "".join(f"line {n}\n" for n in range(5000)))
    lines = diff.splitlines()
    assert len(lines) == MAX_DIFF_LINES + 1
    assert lines[-1] == f"… {5000 + 3 - MAX_DIFF_LINES} more diff lines"
