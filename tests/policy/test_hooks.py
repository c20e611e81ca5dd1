"""Hooks (issue 35): the project's commands before and after tool calls and at the end of a turn, run for
real (bash, a Python script, the session's sandbox when bubblewrap works) around turns driven over the fake
server. Allow, ask, refuse, a time-out, a crash, the JSON they are given, and the audit."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from paicli.app.driver import run_turn
from paicli.common.events import ListSink, Notice
from paicli.config import Settings
from paicli.policy.audit import audit_folder, read_entries
from paicli.policy.hook_config import HookConfig, HooksConfig
from paicli.policy.hooks import run_hook
from paicli.runtime import Runtime, build_runtime
from paicli.tools.base import ApprovalDecision, ApprovalRequest, ToolContext
from tests.conftest import TEST_KEY
from tests.fakellm import FakeLLM, Reply, has_tool_result
from tests.sandboxing import FolderGoes, bwrap_sandbox, dead_socket

# Logs the JSON it is given (and two variables) to the workspace's hooks.log, then does what its first
# argument says.
HOOK = """
import json, os, sys, time
payload = json.load(sys.stdin)
payload["env"] = {name: os.environ.get(name) for name in ("PAICLI_HOOK_EVENT", "PAICLI_TOOL", "PAICLI_PATH")}
with open(os.path.join(payload["workspace"], "hooks.log"), "a") as log:
    log.write(json.dumps(payload) + "\\n")
mode = sys.argv[1]
if mode == "refuse-by-exit":
    print("not on a Friday", file=sys.stderr)
    sys.exit(2)
if mode == "crash":
    print("Traceback: something broke", file=sys.stderr)
    sys.exit(1)
if mode == "hang":
    time.sleep(60)
if mode == "text":
    print("formatted 1 file")
if mode in ("allow", "ask", "refuse"):
    print(json.dumps({"decision": mode, "reason": "the project says " + mode}))
if mode == "tell-model":
    print(json.dumps({"message": "ruff: 2 problems fixed", "to_model": True}))
"""


@pytest.fixture
def hook_script(workspace: Path) -> Path:
    """In the workspace, as a project keeps its hooks (and where the sandbox lets it be read)."""
    path = workspace / "scripts" / "hook.py"
    path.parent.mkdir()
    path.write_text(HOOK)
    return path


def hook(script: Path, mode: str, **options: Any) -> HookConfig:
    return HookConfig(command=f"{sys.executable} {script} {mode}", **options)


Build = Callable[..., Runtime]


@pytest.fixture
async def build(fake: FakeLLM, workspace: Path) -> AsyncIterator[Build]:
    made: list[Runtime] = []

    def make(hooks: HooksConfig, **settings: Any) -> Runtime:
        runtime = build_runtime(
            Settings(
                workspace=workspace,
                api_key=SecretStr(TEST_KEY),
                base_url=fake.base_url,
                max_attempts=1,
                hooks=hooks,
                **settings,
            ),
            ListSink(),
        )
        made.append(runtime)
        return runtime

    yield make
    for runtime in made:
        await runtime.aclose()


def logged(workspace: Path) -> list[dict[str, Any]]:
    path = workspace / "hooks.log"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def conversation(text: str) -> list[dict[str, Any]]:
    return [{"role": "system", "content": "rules"}, {"role": "user", "content": text}]


def tool_results(messages: list[Any]) -> list[str]:
    return [m["content"] for m in messages if m["role"] == "tool"]


def notices(sink: ListSink) -> list[str]:
    return [event.message for event in sink.events if isinstance(event, Notice)]


def audited(runtime: Runtime) -> list[tuple[str, str]]:
    return [(entry["tool"], entry["decision"]) for entry in read_entries(audit_folder(runtime.home), 100)]


def script_write(fake: FakeLLM, path: str = "notes.txt") -> None:
    fake.on(has_tool_result("write_file"), Reply.text("Done."))
    fake.on("write the notes", Reply.tool_calls([("write_file", {"path": path, "content": "hello\n"})]))


# ---- before a tool call --------------------------------------------------------------------------


async def test_a_hook_refusal_reaches_the_model_and_the_call_never_runs(
    fake: FakeLLM, build: Build, hook_script: Path
) -> None:
    runtime = build(HooksConfig(before_tool=[hook(hook_script, "refuse-by-exit", tools=["write_*"])]))
    script_write(fake)
    turn = await run_turn(runtime, ListSink(), conversation("write the notes"))
    [result] = tool_results(turn.messages)
    assert "refused by the project's hook: not on a Friday" in result
    assert "Do not retry" in result  # the model's advice (ToolOutcome.advice), apart from what the user sees
    assert not (runtime.workspace / "notes.txt").exists()
    assert ("hook:before_tool", "hook_refuse") in audited(runtime)
    assert ("write_file", "refused_by_hook") in audited(runtime)


async def test_the_hook_is_given_the_json_of_the_call(fake: FakeLLM, build: Build, hook_script: Path) -> None:
    runtime = build(HooksConfig(before_tool=[hook(hook_script, "none")], after_tool=[hook(hook_script, "none")]))
    fake.on(has_tool_result("read_file"), Reply.text("Done."))
    fake.on(has_tool_result("write_file"), Reply.tool_calls([("read_file", {"path": "a b.txt"})]))
    fake.on("write the notes", Reply.tool_calls([("write_file", {"path": "a b.txt", "content": "hello\n"})]))
    await run_turn(runtime, ListSink(), conversation("write the notes"))
    before, after, _, after_read = logged(runtime.workspace)
    workspace = str(runtime.workspace)
    assert before == {
        "event": "before_tool",
        "tool": "write_file",
        "arguments": {"path": "a b.txt", "content": "hello\n"},
        "task_id": None,
        "workspace": workspace,
        "env": {"PAICLI_HOOK_EVENT": "before_tool", "PAICLI_TOOL": "write_file", "PAICLI_PATH": "a b.txt"},
    }
    assert after["event"] == "after_tool" and after["result"]["ok"] is True
    assert after["result"]["output"] == "wrote 6 bytes to a b.txt (created)"
    assert after_read["result"]["output"].endswith("1\thello")  # the tool's own text, without paicli's marker


async def test_a_hook_that_allows_runs_what_auto_would_refuse_but_never_the_denylist(
    fake: FakeLLM, build: Build, hook_script: Path
) -> None:
    runtime = build(HooksConfig(before_tool=[hook(hook_script, "allow")]), approval="auto", sandbox="off")
    fake.on(has_tool_result("execute_command"), Reply.text("Done."))
    fake.on("make it", Reply.tool_calls([("execute_command", {"command": "touch made && rm -rf /"})]))
    fake.on("touch it", Reply.tool_calls([("execute_command", {"command": "touch made"})]))
    turn = await run_turn(runtime, ListSink(), conversation("touch it"))
    assert "exit code 0" in tool_results(turn.messages)[0] and (runtime.workspace / "made").exists()
    assert ("execute_command", "approved_by_hook") in audited(runtime)
    (runtime.workspace / "made").unlink()
    turn = await run_turn(runtime, ListSink(), conversation("make it"))
    assert "refused" in tool_results(turn.messages)[0] and not (runtime.workspace / "made").exists()


async def test_a_deny_rule_wins_over_a_hook_that_allows(fake: FakeLLM, build: Build, hook_script: Path) -> None:
    runtime = build(HooksConfig(before_tool=[hook(hook_script, "allow")]), approval="yolo", deny=["touch"])
    fake.on(has_tool_result("execute_command"), Reply.text("Done."))
    fake.on("touch it", Reply.tool_calls([("execute_command", {"command": "touch made"})]))
    turn = await run_turn(runtime, ListSink(), conversation("touch it"))
    assert "deny rule 'touch'" in tool_results(turn.messages)[0] and not (runtime.workspace / "made").exists()
    assert logged(runtime.workspace) == []  # a call refused before the hooks never reaches them


@pytest.mark.parametrize("mode", ["ask", "yolo"])
async def test_a_hook_that_asks_makes_even_a_safe_call_ask_the_user(
    fake: FakeLLM, build: Build, hook_script: Path, mode: str
) -> None:
    runtime = build(HooksConfig(before_tool=[hook(hook_script, "ask")]), approval=mode)
    asked: list[ApprovalRequest] = []

    async def approver(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision(allowed=False, how="user", reason="not now")

    runtime.approve = approver
    script_write(fake)
    turn = await run_turn(runtime, ListSink(), conversation("write the notes"))
    assert [request.reason for request in asked] == ["a hook asks: the project says ask"]
    assert "refused by the user: not now" in tool_results(turn.messages)[0]
    assert not (runtime.workspace / "notes.txt").exists()


async def test_a_hook_that_asks_with_nobody_to_ask_refuses(fake: FakeLLM, build: Build, hook_script: Path) -> None:
    runtime = build(HooksConfig(before_tool=[hook(hook_script, "ask")]))  # headless: no approver
    script_write(fake)
    turn = await run_turn(runtime, ListSink(), conversation("write the notes"))
    assert "a hook asks: the project says ask" in tool_results(turn.messages)[0]
    assert not (runtime.workspace / "notes.txt").exists()


# ---- a broken hook never breaks the turn -------------------------------------------------------------


async def test_a_crashing_hook_is_a_notice_and_the_call_goes_on(fake: FakeLLM, build: Build, hook_script: Path) -> None:
    runtime = build(HooksConfig(before_tool=[hook(hook_script, "crash")]))
    script_write(fake)
    sink = ListSink()
    turn = await run_turn(runtime, sink, conversation("write the notes"))
    assert turn.exit_code() == 0 and (runtime.workspace / "notes.txt").read_text() == "hello\n"
    [notice] = notices(sink)
    assert "failed (exit code 1): Traceback: something broke; carrying on without it" in notice
    assert ("hook:before_tool", "hook_failed") in audited(runtime)


async def test_a_hanging_hook_is_killed_at_its_limit_with_what_it_started(
    fake: FakeLLM, build: Build, tmp_path: Path
) -> None:
    pids = tmp_path / "pids"
    command = f"sleep 60 & echo $! > {pids}; sleep 60"
    runtime = build(HooksConfig(before_tool=[HookConfig(command=command, timeout=0.5, sandbox=False)]))
    script_write(fake)
    sink = ListSink()
    turn = await run_turn(runtime, sink, conversation("write the notes"))
    assert turn.exit_code() == 0 and (runtime.workspace / "notes.txt").exists()
    assert any("timed out after 0.5 s and was killed" in notice for notice in notices(sink))
    assert ("hook:before_tool", "hook_timed_out") in audited(runtime)
    assert not running(int(pids.read_text()))  # the hook's background child went with it


def running(pid: int) -> bool:
    """Whether `pid` runs (a zombie nobody reaped does not)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return False


async def test_a_hook_that_cannot_start_is_a_notice(fake: FakeLLM, build: Build, workspace: Path) -> None:
    runtime = build(HooksConfig(before_tool=[HookConfig(command="exit 7", sandbox=False)]))
    script_write(fake)
    sink = ListSink()
    assert (await run_turn(runtime, sink, conversation("write the notes"))).exit_code() == 0
    assert any("failed (exit code 7); carrying on" in notice for notice in notices(sink))


# ---- after a tool call, and when the turn ends -------------------------------------------------------


async def test_after_a_call_the_output_is_shown_and_sent_to_the_model_only_when_asked(
    fake: FakeLLM, build: Build, hook_script: Path
) -> None:
    after = [hook(hook_script, "text", tools=["write_file"]), hook(hook_script, "tell-model", tools=["write_file"])]
    runtime = build(HooksConfig(after_tool=after))
    script_write(fake)
    sink = ListSink()
    turn = await run_turn(runtime, sink, conversation("write the notes"))
    [result] = tool_results(turn.messages)
    assert result.endswith("` says: ruff: 2 problems fixed]") and "formatted 1 file" not in result
    shown = notices(sink)
    assert any(n.endswith("`: formatted 1 file") for n in shown), shown
    assert any(n.endswith("`: ruff: 2 problems fixed") for n in shown), shown


async def test_the_turn_end_hook_is_told_how_the_turn_ended(fake: FakeLLM, build: Build, hook_script: Path) -> None:
    runtime = build(HooksConfig(turn_end=[hook(hook_script, "refuse-by-exit")]))  # a decision counts for nothing
    fake.on("hello", Reply.text("Hi there."))
    sink = ListSink()
    turn = await run_turn(runtime, sink, conversation("hello"))
    assert turn.exit_code() == 0
    [entry] = logged(runtime.workspace)
    assert (entry["event"], entry["status"], entry["content"], entry["tool"]) == (
        "turn_end",
        "answered",
        "Hi there.",
        None,
    )
    assert any("not on a Friday" in notice for notice in notices(sink))


async def test_a_sandboxed_hook_bwrap_could_not_set_up_is_started_once_more(workspace: Path, home: Path) -> None:
    """A socket's folder gone between the sandbox's scan and bwrap's start: the hook still runs, once."""
    folder = home / ".daemon" / "run"
    dead_socket(folder)
    racing = FolderGoes.of(bwrap_sandbox(workspace, home), folder)
    hook = HookConfig(command='echo ran >> counter; cat > /dev/null; echo \'{"decision": "allow"}\'')
    finished = await run_hook(hook, "before_tool", {"event": "before_tool"}, ToolContext(workspace, sandbox=racing))
    assert (finished.code, finished.stdout, finished.stderr) == (0, '{"decision": "allow"}\n', "")
    assert (workspace / "counter").read_text() == "ran\n" and len(racing.builds) == 2
