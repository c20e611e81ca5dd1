"""What a server refused is remembered across runs: the real CLI, twice, against the recorded llama.cpp 500."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import paicli_env, run_paicli
from tests.fakellm import FakeLLM, Reply, has_tools
from tests.plan_script import PLANNER, plan_json, script_summary, system_is
from tests.replay import recorded_http


def asks_for(kind: str) -> Any:
    return lambda body: (body.get("response_format") or {}).get("type") == kind


def schema_requests(fake: FakeLLM) -> int:
    return sum(1 for r in fake.requests if r.body is not None and asks_for("json_schema")(r.body))


def test_json_schema_is_tried_once_in_the_first_run_and_never_in_the_next(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    fake.on(asks_for("json_schema"), recorded_http("llamacpp-json-schema-rejected.http"), repeat=True)
    fake.on(system_is(PLANNER), Reply.text(plan_json({"a": []})), repeat=True)
    fake.on(has_tools, Reply.text("a done"), repeat=True)
    script_summary(fake)
    env = paicli_env(fake, home)
    args = ["-C", str(workspace), "plan", "ship it", "--yes", "--json"]

    first = run_paicli(args, env)
    assert first.code == 0, first.stderr
    assert schema_requests(fake) == 1  # recognised from the 500's body: not retried, no backoff
    assert not any("retrying" in e["message"] for e in first.of("notice"))
    assert any("planning with json_object" in e["message"] for e in first.of("notice"))
    stored = json.loads((home / ".paicli" / "capabilities.json").read_text())
    (entry,) = stored["entries"].values()
    assert "response_format.json_schema" in entry["rejected"] and entry["updated"] > 0

    before = len(fake.requests)
    second = run_paicli(args, env)
    assert second.code == 0, second.stderr
    assert schema_requests(fake) == 1  # none in the second run
    planner_formats = [
        (r.body or {}).get("response_format", {}).get("type") for r in fake.requests[before:] if not has_tools(r.body)
    ]
    assert planner_formats[0] == "json_object"
