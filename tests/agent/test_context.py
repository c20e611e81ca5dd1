from __future__ import annotations

import subprocess
from pathlib import Path

from paicli.agent.context import (
    load_prompt,
    packaged_prompts_dir,
    project_rules,
    system_prompt,
    workspace_overview,
)
from paicli.trust import TrustRequest
from paicli.trusted_folders import screen_prompt_overrides
from tests.conftest import unexpected_warning


def test_every_mode_prompt_is_packaged() -> None:
    names = {p.name for p in (packaged_prompts_dir() / "modes").glob("*.md")}
    assert {"executor.md", "planner.md", "replanner.md"} <= names
    assert (packaged_prompts_dir() / "system.md").is_file()


def test_a_trusted_project_override_wins(tmp_path: Path) -> None:
    home = tmp_path / "home"
    override = tmp_path / ".paicli" / "prompts" / "modes" / "executor.md"
    override.parent.mkdir(parents=True)
    override.write_text("custom executor")
    assert load_prompt("modes/executor.md", tmp_path, home) != "custom executor"  # not trusted yet
    asked: list[TrustRequest] = []
    screen_prompt_overrides(
        tmp_path, home=home, confirm=lambda request: asked.append(request) or True, warn=unexpected_warning
    )
    assert asked and "modes/executor.md" in asked[0].values["prompt overrides"]
    assert load_prompt("modes/executor.md", tmp_path, home) == "custom executor"
    assert "custom executor" in system_prompt("executor", tmp_path, home)
    override.write_text("changed behind the user's back")
    assert "changed behind" not in system_prompt("executor", tmp_path, home)


def test_rules_are_collected_in_order_and_capped(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".paicli").mkdir(parents=True)
    (home / ".paicli" / "PAI.md").write_text("HOME RULE")
    (tmp_path / "PAI.md").write_text("ROOT RULE")
    (tmp_path / ".paicli").mkdir()
    (tmp_path / ".paicli" / "PAI.md").write_text("LOCAL RULE")
    (tmp_path / "AGENTS.md").write_text("AGENTS RULE " + "x" * 30_000)
    rules = project_rules(tmp_path, home)
    positions = [rules.index(r) for r in ("HOME RULE", "ROOT RULE", "LOCAL RULE", "AGENTS RULE")]
    assert positions == sorted(positions)
    assert len(rules) < 24_200 and rules.endswith("[project rules cut at 24,000 characters]")


def test_executor_prompt_is_byte_identical_and_planner_has_no_tool_talk(tmp_path: Path) -> None:
    (tmp_path / "PAI.md").write_text("Use tabs.")
    first = system_prompt("executor", tmp_path, tmp_path)
    assert first == system_prompt("executor", tmp_path, tmp_path)
    assert "Use tabs." in first and "execute_command" in first
    planner = system_prompt("planner", tmp_path, tmp_path).split("# Project rules")[0]
    assert "# How you work" not in planner and "Prefer `edit_file`" not in planner  # no tool-use guidance
    assert "no tools" in planner  # it names tools only as direct actions a task may carry


def test_the_planner_system_prompt_lists_no_files_the_map_goes_in_its_user_message(tmp_path: Path) -> None:
    """The system prompt stays the same whatever the files (and the goal): provider prompt caches keep hitting."""
    before = system_prompt("planner", tmp_path, tmp_path / "home")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "unusual_module_name.py").write_text("")
    after = system_prompt("planner", tmp_path, tmp_path / "home")
    assert before == after and "unusual_module_name" not in after


def test_workspace_overview_is_capped(tmp_path: Path) -> None:
    for n in range(20):
        (tmp_path / f"f{n:02}.txt").write_text("")
    overview = workspace_overview(tmp_path, limit=5)
    assert overview.splitlines()[:5] == ["f00.txt", "f01.txt", "f02.txt", "f03.txt", "f04.txt"]
    assert "stops at 5" in overview


def test_rule_files_leading_outside_the_workspace_or_huge_are_left_out(tmp_path: Path) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    (tmp_path / "credentials").write_text("aws_secret_access_key = SECRET")
    (workspace / "AGENTS.md").symlink_to(tmp_path / "credentials")
    (workspace / "CLAUDE.md").write_text("SAME REPO RULE")
    (workspace / "PAI.md").symlink_to(workspace / "CLAUDE.md")  # inside the workspace: fine
    (workspace / ".paicli").mkdir()
    with open(workspace / ".paicli" / "PAI.md", "wb") as sparse:
        sparse.truncate(1 << 30)
    rules = project_rules(workspace, home)
    assert "SECRET" not in rules and "SAME REPO RULE" in rules


def test_the_overview_never_names_a_git_ignored_or_paicliignored_file(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("")
    (tmp_path / ".env").write_text("KEY=1\n")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "dump.sql").write_text("")
    (tmp_path / ".gitignore").write_text(".env\n")
    (tmp_path / ".paicliignore").write_text("data/\n")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    assert workspace_overview(tmp_path).splitlines() == [".gitignore", ".paicliignore", "src/", "src/app.py"]
