"""The tool box: schemas the model sees, and every way a call can go wrong turned into an error result."""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel, ConfigDict

from paicli.llm.types import ToolCall
from paicli.tools.base import Tool, ToolContext, ToolFailure, ToolOutcome
from paicli.tools.toolbox import ToolBox

CONTRACT = {
    "read_file": ({"path"}, {"path", "offset", "limit"}),
    "write_file": ({"path", "content"}, {"path", "content"}),
    "edit_file": ({"path", "old_text", "new_text"}, {"path", "old_text", "new_text"}),
    "list_dir": (set(), {"path"}),
    "glob_files": ({"pattern"}, {"pattern", "path", "include_ignored"}),  # optional additions are allowed
    "grep_code": ({"pattern"}, {"pattern", "path", "glob", "include_ignored"}),
    "execute_command": ({"command"}, {"command", "timeout"}),
    "fetch_url": ({"url"}, {"url", "offset"}),
}


async def call(box: ToolBox, ctx: ToolContext, name: str, arguments: str | dict[str, Any]) -> ToolOutcome:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return await box.execute(ToolCall(id="call_1", name=name, arguments=raw), ctx)


@pytest.fixture
def box() -> ToolBox:
    return ToolBox.default()


def test_default_box_has_the_eight_contract_tools_in_order(box: ToolBox) -> None:
    assert [spec["function"]["name"] for spec in box.specs()] == list(CONTRACT)


@pytest.mark.parametrize("name", list(CONTRACT))
def test_each_schema_matches_the_contract(box: ToolBox, name: str) -> None:
    spec = next(s for s in box.specs() if s["function"]["name"] == name)
    assert spec["type"] == "function"
    function = spec["function"]
    assert len(function["description"]) > 40
    params = function["parameters"]
    required, allowed = CONTRACT[name]
    assert set(params.get("required", [])) == required
    assert set(params["properties"]) == allowed
    assert params["additionalProperties"] is False
    assert all(prop.get("description") for prop in params["properties"].values())


def test_specs_are_byte_stable_and_callers_cannot_alter_them(box: ToolBox) -> None:
    first = json.dumps(box.specs())
    with pytest.raises(TypeError, match="cannot be changed"):
        box.specs()[0]["function"]["name"] = "tampered"
    with pytest.raises(TypeError):
        box.specs()[0]["function"]["parameters"]["properties"].pop("path")
    box.specs().clear()  # the list is the caller's own
    assert json.dumps(box.specs()) == first
    assert json.dumps(ToolBox.default().specs()) == first


def test_a_copy_of_a_spec_is_an_ordinary_dict_the_caller_may_change(box: ToolBox) -> None:
    spec = copy.deepcopy(box.specs()[0])
    spec["function"]["name"] = "renamed"
    assert box.specs()[0]["function"]["name"] != "renamed"


def test_read_only_flags(box: ToolBox) -> None:
    assert [n for n in CONTRACT if box.is_read_only(n)] == ["read_file", "list_dir", "glob_files", "grep_code"]
    assert box.is_read_only("no_such_tool") is False


def test_duplicate_names_are_rejected() -> None:
    class A(ExplodingTool):
        pass

    with pytest.raises(ValueError):
        ToolBox([ExplodingTool(), A()])


async def test_success_returns_the_output_and_parsed_arguments(box: ToolBox, ctx: ToolContext) -> None:
    outcome = await call(box, ctx, "write_file", {"path": "a.txt", "content": "hi"})
    assert outcome.ok
    assert outcome.output == "wrote 2 bytes to a.txt (created)"
    assert outcome.arguments == {"path": "a.txt", "content": "hi"}


async def test_unknown_tool_names_the_known_tools(box: ToolBox, ctx: ToolContext) -> None:
    outcome = await call(box, ctx, "delete_everything", {})
    assert not outcome.ok
    assert outcome.output.startswith("Error: unknown tool 'delete_everything'")
    assert all(name in outcome.output for name in CONTRACT)


async def test_bad_json_quotes_the_parser(box: ToolBox, ctx: ToolContext) -> None:
    outcome = await call(box, ctx, "read_file", '{"path": "a.txt",')
    assert not outcome.ok
    assert outcome.output.startswith("Error: read_file: the arguments are not valid JSON (")
    assert "line 1 column" in outcome.output
    assert outcome.arguments == '{"path": "a.txt",'


async def test_double_encoded_json_is_accepted(box: ToolBox, ctx: ToolContext, workspace: Path) -> None:
    (workspace / "a.txt").write_text("hello\n")
    outcome = await call(box, ctx, "read_file", json.dumps(json.dumps({"path": "a.txt"})))
    assert outcome.ok, outcome.output
    assert outcome.output == "     1\thello"


async def test_empty_arguments_mean_no_arguments(box: ToolBox, ctx: ToolContext, workspace: Path) -> None:
    (workspace / "x").mkdir()
    for raw in ("", "  ", "{}", "null"):
        outcome = await call(box, ctx, "list_dir", raw)
        assert outcome.ok and outcome.output == "x/", raw


@pytest.mark.parametrize("raw", ["[1, 2]", "42", '"just text"', "true"])
async def test_arguments_that_are_not_an_object_are_an_error(box: ToolBox, ctx: ToolContext, raw: str) -> None:
    outcome = await call(box, ctx, "list_dir", raw)
    assert not outcome.ok
    assert outcome.output.startswith("Error: list_dir: the arguments ")


async def test_missing_field_is_a_short_message(box: ToolBox, ctx: ToolContext) -> None:
    outcome = await call(box, ctx, "write_file", {"path": "a.txt"})
    assert outcome.output == "Error: write_file: 'content' is required"


async def test_wrong_type_names_the_field(box: ToolBox, ctx: ToolContext) -> None:
    outcome = await call(box, ctx, "read_file", {"path": "a.txt", "offset": "soon"})
    assert not outcome.ok
    assert outcome.output.startswith("Error: read_file: 'offset': ")
    assert "integer" in outcome.output
    outcome = await call(box, ctx, "read_file", {"path": 123})
    assert outcome.output.startswith("Error: read_file: 'path': ")


async def test_extra_fields_are_refused_with_the_allowed_ones(box: ToolBox, ctx: ToolContext) -> None:
    outcome = await call(box, ctx, "read_file", {"path": "a.txt", "encoding": "latin-1"})
    assert outcome.output == ("Error: read_file: unexpected argument 'encoding' (allowed: path, offset, limit)")


async def test_tool_failure_becomes_an_error_result(box: ToolBox, ctx: ToolContext) -> None:
    outcome = await call(box, ctx, "write_file", {"path": ".git/config", "content": "x"})
    assert outcome == ToolOutcome(
        ok=False,
        output="Error: refused: .git/config is protected",
        arguments={"path": ".git/config", "content": "x"},
    )


class ExplodingArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    how: str = "value"


class ExplodingTool(Tool):
    name: ClassVar[str] = "explode"
    description: ClassVar[str] = "Raises whatever it is told to, for the tests."
    Args = ExplodingArgs

    async def run(self, args: ExplodingArgs, ctx: ToolContext) -> str:
        if args.how == "value":
            raise ValueError("bad value")
        if args.how == "failure":
            raise ToolFailure("")
        if args.how == "cancel":
            raise asyncio.CancelledError
        return "x" * 100_000


async def test_unexpected_exceptions_become_an_error_result(ctx: ToolContext) -> None:
    outcome = await call(ToolBox([ExplodingTool()]), ctx, "explode", {"how": "value"})
    assert outcome.output == "Error: explode failed: ValueError: bad value"
    outcome = await call(ToolBox([ExplodingTool()]), ctx, "explode", {"how": "failure"})
    assert outcome.output == "Error: explode failed"


async def test_cancellation_travels_up(ctx: ToolContext) -> None:
    with pytest.raises(asyncio.CancelledError):
        await call(ToolBox([ExplodingTool()]), ctx, "explode", {"how": "cancel"})


async def test_output_is_capped_at_the_context_limit(workspace: Path) -> None:
    ctx = ToolContext(workspace=workspace, output_limit=1_000)
    outcome = await call(ToolBox([ExplodingTool()]), ctx, "explode", {"how": "long"})
    assert outcome.ok
    assert len(outcome.output) <= 1_000
    assert "characters omitted" in outcome.output


async def test_secrets_are_masked_in_results_and_errors(box: ToolBox, workspace: Path) -> None:
    ctx = ToolContext(workspace=workspace, secrets=["sk-live-0123456789"])
    (workspace / "env.txt").write_text("KEY=sk-live-0123456789\n")
    outcome = await call(box, ctx, "read_file", {"path": "env.txt"})
    assert outcome.output == "     1\tKEY=***"
    outcome = await call(box, ctx, "execute_command", {"command": "echo sk-live-0123456789; exit 2"})
    assert outcome.output == "***\nexit code 2"
    outcome = await call(box, ctx, "read_file", {"path": "sk-live-0123456789.txt"})
    assert not outcome.ok and "sk-live" not in outcome.output
