"""Custom slash commands (issue 35): files in ~/.paicli/commands and a trusted .paicli/commands, their
arguments, namespaces, front matter, names refused, and the tools a command narrows a turn to, over the
fake server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from paicli.app.custom_commands import (
    CustomCommand,
    expand,
    invocation,
    load_custom_commands,
    parse_command,
    split_invocation,
)
from paicli.app.driver import run_turn
from paicli.common.errors import ConfigError
from paicli.common.events import ListSink, Notice
from paicli.config import Settings
from paicli.config_sources import load_settings
from paicli.runtime import Runtime, build_runtime
from paicli.trust import TrustRequest, TrustStore
from tests.conftest import TEST_KEY
from tests.fakellm import FakeLLM, Reply, has_tool_result


def write(folder: Path, relative: str, text: str) -> Path:
    path = folder / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def user_command(home: Path, relative: str, text: str) -> Path:
    return write(home / ".paicli" / "commands", relative, text)


def repo_command(workspace: Path, relative: str, text: str) -> Path:
    return write(workspace / ".paicli" / "commands", relative, text)


def command(text: str) -> CustomCommand:
    return parse_command("/c", text, Path("c.md"), "user")


# ---- arguments -------------------------------------------------------------------------------------


def test_arguments_fill_the_placeholders_words_quoted_as_in_a_shell() -> None:
    review = command("Review $1 against $2.\nAll of it: $ARGUMENTS")
    assert expand(review, "'src/a b.py' main") == "Review src/a b.py against main.\nAll of it: 'src/a b.py' main"
    assert expand(review, "one") == "Review one against .\nAll of it: one"  # a missing word is empty
    assert expand(review, 'unclosed "quote') == 'Review unclosed against "quote.\nAll of it: unclosed "quote'


def test_a_price_or_a_longer_number_is_not_a_placeholder() -> None:
    assert expand(command("It costs $100 and $1x; $ARGUMENTSX stays"), "a") == "It costs $100 and ax; $ARGUMENTSX stays"


def test_without_a_placeholder_the_arguments_follow_the_prompt() -> None:
    assert (
        expand(command("Run the tests."), "  only the slow ones ") == "Run the tests.\n\nARGUMENTS: only the slow ones"
    )
    assert expand(command("Run the tests."), "") == "Run the tests."


def test_a_headless_prompt_names_a_command_only_when_it_starts_with_one() -> None:
    assert split_invocation("/frontend:review src/app.ts\nand more") == ("/frontend:review", "src/app.ts\nand more")
    assert split_invocation("/etc/hosts says what?") is None
    assert split_invocation("/a:b:c:d:e x") is None  # deeper than four parts
    assert split_invocation("hello") is None


# ---- front matter ------------------------------------------------------------------------------------


def test_front_matter_gives_description_hint_tools_and_plan() -> None:
    parsed = command(
        '---\ndescription: "Review #12, a file" # why\nargument-hint: [FILE]\nallowed-tools: read_file, "grep_code"\n'
        "plan: true  # plan it\nmodel: some-other-agents-key\n---\nReview $1.\n"
    )
    assert (parsed.description, parsed.argument_hint, parsed.plan) == ("Review #12, a file", "[FILE]", True)
    assert parsed.allowed_tools == ("read_file", "grep_code") and parsed.text == "Review $1."
    listed = command("---\nallowed-tools:\n  - read_file\n  - mcp__github__*\n---\nx")
    assert listed.allowed_tools == ("read_file", "mcp__github__*") and not listed.plan
    assert command("---\nallowed-tools: [list_dir]\n---\nx").allowed_tools == ("list_dir",)
    assert command("---\nallowed-tools:\n---\nx").allowed_tools == ()  # named, but none: no tools
    assert command("no front matter").allowed_tools is None  # every tool


def test_without_a_closing_line_the_whole_file_is_the_prompt() -> None:
    assert command("---\ndescription: x\nthe rest").text == "---\ndescription: x\nthe rest"


def test_a_plan_value_that_is_no_boolean_leaves_the_command_out(tmp_path: Path) -> None:
    home = tmp_path / "home"
    user_command(home, "odd.md", "---\nplan: maybe\n---\nx")
    loaded = load_custom_commands(tmp_path, home)
    assert loaded.find("/odd") is None
    assert any("plan must be true or false, not 'maybe'" in notice for notice in loaded.notices)


# ---- names -------------------------------------------------------------------------------------------


def test_folders_are_namespaces_and_bad_names_are_left_out_with_a_notice(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    workspace.mkdir()
    user_command(home, "frontend/review.md", "Review the front end: $ARGUMENTS")
    user_command(home, "a/b/c/d.md", "deep enough")
    user_command(home, "a/b/c/d/e.md", "too deep")
    user_command(home, "bad name.md", "x")
    user_command(home, "notes.txt", "not a command")
    loaded = load_custom_commands(workspace, home)
    assert list(loaded.commands) == ["/a:b:c:d", "/frontend:review"]
    assert len(loaded.notices) == 2 and all("a name is letters, digits" in n for n in loaded.notices)


def test_a_command_may_not_shadow_a_built_in_one(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for name in ("help", "plan", "quit", "review"):
        user_command(home, f"{name}.md", "mine")
    loaded = load_custom_commands(tmp_path, home)
    assert list(loaded.commands) == ["/review"]
    assert sorted(n.split(": ")[1] for n in loaded.notices) == [
        f"/{name} is one of paicli's own commands" for name in ("help", "plan", "quit")
    ]


# ---- trust -------------------------------------------------------------------------------------------


def test_a_repositorys_commands_count_only_once_trusted_as_they_are_now(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    (home / ".paicli").mkdir(parents=True)
    file = repo_command(workspace, "deploy.md", "Deploy to production.")
    assert load_custom_commands(workspace, home).find("/deploy") is None
    warnings: list[str] = []
    load_settings(workspace=workspace, env={}, home=home, warn=warnings.append)  # headless: nobody to ask
    assert any("custom commands (deploy.md): not trusted yet" in w for w in warnings), warnings
    asked: list[TrustRequest] = []
    load_settings(
        workspace=workspace, env={}, home=home, warn=warnings.append, confirm_trust=lambda r: not asked.append(r)
    )
    assert asked[0].values == {"custom commands": "deploy.md"}
    assert asked[0].path == workspace.resolve() / ".paicli" / "commands"
    trusted = load_custom_commands(workspace, home).find("/deploy")
    assert trusted is not None and trusted.source == "repository" and trusted.text == "Deploy to production."
    file.write_text("Deploy and delete the backups.")  # a `git pull` changed it: asked about again
    assert load_custom_commands(workspace, home).find("/deploy") is None


def test_a_symlinked_repository_command_is_refused_and_never_read(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    (home / ".paicli").mkdir(parents=True)
    secret = write(tmp_path, "secret.md", "the user's private notes")
    (workspace / ".paicli" / "commands").mkdir(parents=True)
    (workspace / ".paicli" / "commands" / "leak.md").symlink_to(secret)
    warnings: list[str] = []
    load_settings(workspace=workspace, env={}, home=home, warn=warnings.append, confirm_trust=lambda r: True)
    assert any("leak.md (a symlink)" in w for w in warnings), warnings
    assert load_custom_commands(workspace, home).commands == {}


def test_a_trusted_repository_command_replaces_the_users_with_a_notice(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    user_command(home, "review.md", "mine")
    repo_command(workspace, "review.md", "the project's")
    assert TrustStore(home).trust_current(workspace, ".paicli/commands/review.md")
    loaded = load_custom_commands(workspace, home)
    found = loaded.find("/review")
    assert found is not None and found.text == "the project's"
    assert loaded.notices == (f"this repository's /review replaces yours ({home / '.paicli/commands/review.md'})",)


def test_a_headless_prompt_for_an_unknown_command_is_a_usage_error(tmp_path: Path) -> None:
    home = tmp_path / "home"
    user_command(home, "review.md", "Review $1")
    found = invocation("/review a.py", tmp_path, home)
    assert found is not None and found.text == "Review a.py"
    assert invocation(" /reviw a.py", tmp_path, home) is None  # a leading space: a message as it is
    with pytest.raises(ConfigError, match=r"unknown command /reviw: .*\(the custom commands: /review\)"):
        invocation("/reviw a.py", tmp_path, home)
    with pytest.raises(ConfigError, match="/undo is a command of the REPL"):
        invocation("/undo", tmp_path, home)


# ---- allowed-tools: the turn's only tools --------------------------------------------------------


@pytest.fixture
async def runtime(fake: FakeLLM, workspace: Path) -> AsyncIterator[Runtime]:
    settings = Settings(workspace=workspace, api_key=SecretStr(TEST_KEY), base_url=fake.base_url, max_attempts=1)
    runtime = build_runtime(settings, ListSink())
    yield runtime
    await runtime.aclose()


async def test_allowed_tools_are_the_only_tools_the_model_gets_and_may_call(fake: FakeLLM, runtime: Runtime) -> None:
    (runtime.workspace / "a.txt").write_text("hello\n")
    fake.on(has_tool_result("write_file"), Reply.text("I could not write it."))
    fake.on("look around", Reply.tool_calls([("write_file", {"path": "a.txt", "content": "gone"})]))
    sink = ListSink()
    messages = [{"role": "system", "content": "rules"}, {"role": "user", "content": "look around"}]
    turn = await run_turn(runtime, sink, messages, allowed_tools=("read_file", "*_dir", "Bash(git:*)"))
    assert turn.exit_code() == 0
    offered = [tool["function"]["name"] for tool in fake.requests[0].body["tools"]]
    assert offered == ["read_file", "list_dir"]
    refused = [m["content"] for m in turn.messages if m["role"] == "tool"]
    assert "unknown tool 'write_file'; the tools are: read_file, list_dir" in refused[0]
    assert (runtime.workspace / "a.txt").read_text() == "hello\n"
    notices = [e.message for e in sink.events if isinstance(e, Notice)]
    assert notices == ["allowed-tools: no tool is named Bash(git:*)"]


async def test_no_allowed_tools_sends_no_tools_at_all(fake: FakeLLM, runtime: Runtime) -> None:
    fake.on("just talk", Reply.text("Talking."))
    messages = [{"role": "system", "content": "rules"}, {"role": "user", "content": "just talk"}]
    turn = await run_turn(runtime, ListSink(), messages, allowed_tools=())
    assert turn.exit_code() == 0 and "tools" not in fake.requests[0].body
