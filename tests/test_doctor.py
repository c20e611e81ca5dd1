"""`paicli doctor` against scripted servers and the recorded llama.cpp replies: the checks, their JSON
shape, exit codes, what is remembered, and that the key is never printed."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tests.conftest import TEST_KEY, Finished, paicli_env, run_paicli
from tests.fakellm import Body, FakeLLM, Reply, any_request
from tests.replay import recorded_http, recorded_json, recorded_stream
from tests.sandboxing import require_bwrap

CHECK_NAMES = [
    "chat",
    "models",
    "streaming",
    "usage_in_stream",
    "tool_calls",
    "parallel_tool_calls",
    "json_schema",
    "json_object",
    "reasoning",
    "vision",
    "sandbox",
    "mcp",
]


def asks(kind: str) -> Any:
    return lambda body: (body.get("response_format") or {}).get("type") == kind


def not_streamed(body: Body) -> bool:
    return not body.get("stream")


def doctor(fake: FakeLLM, home: Path, *args: str, **env: str) -> Finished:
    return run_paicli(["doctor", *args], paicli_env(fake, home, **env))


def checks(done: Finished) -> dict[str, dict[str, Any]]:
    report = json.loads(done.stdout)
    assert list(report) == ["base_url", "model", "checks"]
    assert [c["name"] for c in report["checks"]] == CHECK_NAMES
    return {c["name"]: c for c in report["checks"]}


def script_capable_server(fake: FakeLLM, *, schema: Reply, usage: bool) -> None:
    no_usage: dict[str, Any] = {} if usage else {"usage": False}
    fake.on(asks("json_schema"), schema, repeat=True)
    fake.on(asks("json_object"), Reply.text('{"answer": "yes"}', **no_usage), repeat=True)
    fake.on(
        "Call the add tool twice",
        Reply.tool_calls([("add", {"a": 1, "b": 2}), ("add", {"a": 3, "b": 4})], **no_usage),
        repeat=True,
    )
    fake.on("Use the add tool", Reply.tool_calls([("add", {"a": 2, "b": 3})], **no_usage), repeat=True)
    fake.on(any_request, Reply.text("OK 1 2 3 4 5", **no_usage), repeat=True)


def test_a_server_rejecting_json_schema_and_sending_no_usage_shows_both_as_not_ok(fake: FakeLLM, home: Path) -> None:
    script_capable_server(fake, schema=recorded_http("llamacpp-json-schema-rejected.http"), usage=False)
    done = doctor(fake, home, "--json")
    assert done.code == 0, done.stderr
    found = checks(done)
    assert found["json_schema"]["ok"] is False and "json_object" in found["json_schema"]["detail"]
    assert found["usage_in_stream"]["ok"] is False and "estimates" in found["usage_in_stream"]["detail"]
    assert [
        found[n]["ok"] for n in ("chat", "models", "streaming", "tool_calls", "parallel_tool_calls", "json_object")
    ] == [True] * 6
    assert found["reasoning"]["ok"] is None and found["mcp"]["ok"] is None
    assert "first token after" in found["streaming"]["detail"]
    assert TEST_KEY not in done.stdout + done.stderr
    assert sum(1 for r in fake.requests if r.body and asks("json_schema")(r.body)) == 1  # not retried
    remembered = json.loads((home / ".paicli" / "capabilities.json").read_text())
    (entry,) = remembered["entries"].values()
    assert entry["rejected"] == ["response_format.json_schema"]


def test_the_recorded_llamacpp_server(fake: FakeLLM, home: Path) -> None:
    fake.models_reply = recorded_http("llamacpp-models.http")
    fake.on(asks("json_schema"), recorded_http("llamacpp-json-schema-rejected.http"), repeat=True)
    fake.on(asks("json_object"), recorded_stream("llamacpp-stream-json-object.sse"), repeat=True)
    fake.on(lambda body: bool(body.get("tools")), recorded_stream("llamacpp-stream-with-tools.sse"), repeat=True)
    fake.on(not_streamed, recorded_json("llamacpp-nonstream.json"), repeat=True)
    fake.on(any_request, recorded_stream("llamacpp-stream-text.sse"), repeat=True)
    done = doctor(fake, home, "--json", PAICLI_MODEL="smollm2")
    assert done.code == 0, done.stderr
    found = checks(done)
    assert found["chat"]["ok"] is True and "Hello there" in found["chat"]["detail"]
    assert found["models"]["ok"] is None and "SmolLM2-135M-Instruct" in found["models"]["detail"]
    assert (found["streaming"]["ok"], found["usage_in_stream"]["ok"]) == (True, False)
    assert found["tool_calls"]["ok"] is False and "answered in text" in found["tool_calls"]["detail"]
    assert found["parallel_tool_calls"]["ok"] is None
    assert (found["json_schema"]["ok"], found["json_object"]["ok"]) == (False, True)


def test_replies_nested_too_deeply_fail_their_checks_not_the_doctor(fake: FakeLLM, home: Path) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    fake.on(asks("json_schema"), Reply.text(deep, chunk=20_000), repeat=True)
    fake.on(asks("json_object"), Reply.text(deep, chunk=20_000), repeat=True)
    fake.on("Use the add tool", Reply.tool_calls([("add", deep)], chunk=20_000), repeat=True)
    fake.on(any_request, Reply.text("OK 1 2 3 4 5"), repeat=True)
    done = doctor(fake, home, "--json")
    assert done.code == 0, done.stderr[-2000:]
    found = checks(done)
    assert found["chat"]["ok"] is True
    assert found["tool_calls"]["ok"] is False and found["parallel_tool_calls"]["ok"] is None
    assert found["json_schema"]["ok"] is False and found["json_object"]["ok"] is False
    assert "not a JSON object" in found["json_object"]["detail"]


def test_chat_failing_exits_1_with_the_reason_and_probes_nothing_else(fake: FakeLLM, home: Path) -> None:
    fake.on(any_request, Reply.error(401, f"invalid key {TEST_KEY}"), repeat=True)
    done = doctor(fake, home, "--json")
    assert done.code == 1
    found = checks(done)
    assert found["chat"]["ok"] is False and "rejected the API key" in found["chat"]["detail"]
    # the sandbox is the machine's, not the endpoint's: it is checked all the same
    assert all(found[name]["ok"] is None for name in CHECK_NAMES[2:] if name != "sandbox")
    assert TEST_KEY not in done.stdout and "***" in found["chat"]["detail"]
    assert len(fake.requests) == 1


def test_an_unreachable_server_exits_1(home: Path, fake: FakeLLM) -> None:
    done = doctor(fake, home, "--json", PAICLI_BASE_URL="http://127.0.0.1:9/v1")
    assert done.code == 1 and "could not reach" in checks(done)["chat"]["detail"]


def test_no_key_for_a_remote_endpoint_exits_2(fake: FakeLLM, home: Path) -> None:
    env = paicli_env(fake, home, PAICLI_BASE_URL="https://api.example.invalid/v1")
    del env["PAICLI_API_KEY"]
    done = run_paicli(["doctor"], env)
    assert done.code == 2 and "PAICLI_API_KEY" in done.stderr and done.stdout == ""


def test_reasoning_is_reported_with_its_send_back_rule(fake: FakeLLM, home: Path) -> None:
    script_capable_server(fake, schema=Reply.text('{"answer": "yes"}', reasoning="hm"), usage=True)
    done = doctor(fake, home, "--json", PAICLI_MODEL="deepseek-reasoner")
    found = checks(done)
    assert found["reasoning"]["ok"] is True and "sent back: never" in found["reasoning"]["detail"]
    assert found["usage_in_stream"]["ok"] is True


def test_the_table_and_refresh(fake: FakeLLM, home: Path) -> None:
    script_capable_server(fake, schema=Reply.error(400, "response_format json_schema is not supported"), usage=True)
    first = doctor(fake, home)
    assert first.code == 0
    lines = first.stdout.splitlines()
    assert lines[0] == f"paicli doctor · {fake.base_url} · fake-model"
    assert any(line.strip().startswith("✓ chat") for line in lines)
    assert any(line.strip().startswith("✗ json_schema") for line in lines)
    assert "remembered for this server and model: not supported: response_format json_schema" in first.stdout
    fake.on(asks("json_schema"), Reply.text('{"answer": "yes"}'), repeat=True)  # the server got upgraded
    fake._rules.insert(0, fake._rules.pop())
    second = doctor(fake, home, "--refresh")
    assert "forgot what was remembered" in second.stdout
    assert any(line.strip().startswith("✓ json_schema") for line in second.stdout.splitlines())
    assert "not supported" not in second.stdout


def test_configured_mcp_servers_are_started_and_reported(fake: FakeLLM, home: Path) -> None:
    from tests.mcp.conftest import server_toml

    script_capable_server(fake, schema=Reply.text('{"answer": "yes"}'), usage=True)
    config = home / ".paicli" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(server_toml("tools"))
    found = checks(doctor(fake, home, "--json"))
    assert found["mcp"]["ok"] is True and "tools ready (" in found["mcp"]["detail"]
    config.write_text(server_toml("tools") + '\n[mcp_servers.broken]\ncommand = "/bin/false"\nstartup_timeout = 5\n')
    found = checks(doctor(fake, home, "--json"))
    assert found["mcp"]["ok"] is False and "broken failed" in found["mcp"]["detail"]


def test_the_sandbox_check_says_whether_commands_are_contained(fake: FakeLLM, home: Path, tmp_path: Path) -> None:
    fake.on(any_request, Reply.text("OK"), repeat=True)
    off = checks(doctor(fake, home, "--json", "--sandbox", "off"))["sandbox"]
    assert off["ok"] is None and "sandbox = off" in off["detail"]
    stub = tmp_path / "stub"
    stub.mkdir()
    (stub / "bwrap").write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    (stub / "bwrap").chmod(0o755)
    path = f"{stub}{os.pathsep}{os.environ.get('PATH', os.defpath)}"
    broken = checks(doctor(fake, home, "--json", PATH=path))["sandbox"]
    assert broken["ok"] is False and "No permissions to create new namespace" in broken["detail"]
    require_bwrap()
    working = checks(doctor(fake, home, "--json"))["sandbox"]
    assert working["ok"] is True and "commands are contained (bubblewrap" in working["detail"]


def test_vision_is_probed_with_an_image_and_a_refusal_is_remembered(fake: FakeLLM, home: Path) -> None:
    fake.on(lambda body: "image_url" in json.dumps(body), Reply.error(400, "image input is not supported"), repeat=True)
    script_capable_server(fake, schema=Reply.text('{"answer": "yes"}'), usage=True)
    found = checks(doctor(fake, home, "--json"))
    assert found["vision"]["ok"] is False and "takes no images" in found["vision"]["detail"]
    remembered = json.loads((home / ".paicli" / "capabilities.json").read_text())
    (entry,) = remembered["entries"].values()
    assert "vision" in entry["rejected"]


def test_a_model_that_takes_the_image_shows_vision_ok(fake: FakeLLM, home: Path) -> None:
    script_capable_server(fake, schema=Reply.text('{"answer": "yes"}'), usage=True)
    found = checks(doctor(fake, home, "--json"))
    assert found["vision"]["ok"] is True
    [image] = [r for r in fake.requests if r.body and "image_url" in json.dumps(r.body)]
    assert image.messages[0]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
