"""The workspace guard: what resolves inside the workspace, and every way out that must be refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from paicli.tools.base import ToolFailure
from paicli.tools.guard import display_path, resolve_in_workspace


def refused(workspace: Path, raw: str, *, for_write: bool = False) -> str:
    with pytest.raises(ToolFailure) as caught:
        resolve_in_workspace(workspace, raw, for_write=for_write)
    message = str(caught.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize("for_write", [False, True])
@pytest.mark.parametrize(
    "raw",
    ["../x", "a/../../x", "/etc/passwd", "..", "./../ws-evil/x", "a/b/../../../x"],
)
def test_paths_leaving_the_workspace_are_refused(workspace: Path, raw: str, for_write: bool) -> None:
    assert "outside the workspace" in refused(workspace, raw, for_write=for_write)


def test_home_paths_are_refused_not_expanded(workspace: Path) -> None:
    (workspace / "~").mkdir()  # even when a folder literally named ~ exists
    assert "'~'" in refused(workspace, "~/.ssh/id_rsa")
    assert "'~'" in refused(workspace, "~")


@pytest.mark.parametrize("raw", ["$HOME/x", "${HOME}/x", "a/$USER"])
def test_environment_variables_are_refused_not_expanded(workspace: Path, raw: str) -> None:
    assert "environment variable" in refused(workspace, raw)


def test_sibling_folder_sharing_the_prefix_is_outside(tmp_path: Path, workspace: Path) -> None:
    evil = tmp_path / "ws-evil"
    evil.mkdir()
    (evil / "x").write_text("secret")
    assert "outside" in refused(workspace, str(evil / "x"))
    assert "outside" in refused(workspace, "../ws-evil/x")


@pytest.mark.parametrize("for_write", [False, True])
def test_symlinked_file_pointing_outside_is_refused(tmp_path: Path, workspace: Path, for_write: bool) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    (workspace / "link.txt").symlink_to(outside)
    assert "outside" in refused(workspace, "link.txt", for_write=for_write)


@pytest.mark.parametrize("for_write", [False, True])
def test_symlinked_folder_pointing_outside_is_refused(tmp_path: Path, workspace: Path, for_write: bool) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text("secret")
    (workspace / "out").symlink_to(outside, target_is_directory=True)
    assert "outside" in refused(workspace, "out/f.txt", for_write=for_write)
    assert "outside" in refused(workspace, "out/new.txt", for_write=for_write)
    assert "outside" in refused(workspace, "out", for_write=for_write)


@pytest.mark.parametrize("for_write", [False, True])
def test_dangling_symlink_pointing_outside_is_refused(tmp_path: Path, workspace: Path, for_write: bool) -> None:
    (workspace / "dangling").symlink_to(tmp_path / "does-not-exist-yet")
    assert "outside" in refused(workspace, "dangling", for_write=for_write)


def test_symlink_staying_inside_is_allowed_and_resolved(workspace: Path) -> None:
    (workspace / "real").mkdir()
    (workspace / "real" / "f.txt").write_text("x")
    (workspace / "alias").symlink_to(workspace / "real", target_is_directory=True)
    resolved = resolve_in_workspace(workspace, "alias/f.txt", for_write=True)
    assert resolved == (workspace / "real" / "f.txt").resolve()


def test_absolute_path_inside_the_workspace_is_allowed(workspace: Path) -> None:
    resolved = resolve_in_workspace(workspace, str(workspace / "src" / "a.py"), for_write=False)
    assert resolved == workspace.resolve() / "src" / "a.py"


def test_new_file_in_new_nested_folder_is_allowed(workspace: Path) -> None:
    resolved = resolve_in_workspace(workspace, "new/deeper/file.txt", for_write=True)
    assert resolved == workspace.resolve() / "new" / "deeper" / "file.txt"


def test_workspace_reached_through_a_symlink_still_works(tmp_path: Path, workspace: Path) -> None:
    link = tmp_path / "ws-link"
    link.symlink_to(workspace, target_is_directory=True)
    assert resolve_in_workspace(link, "a.txt", for_write=True) == workspace.resolve() / "a.txt"
    assert "outside" in refused(link, "../x")


def test_dot_dot_that_stays_inside_is_allowed(workspace: Path) -> None:
    assert resolve_in_workspace(workspace, "a/../b.txt", for_write=False) == workspace.resolve() / "b.txt"


@pytest.mark.parametrize("raw", ["", "   "])
def test_empty_path_is_refused(workspace: Path, raw: str) -> None:
    assert "empty" in refused(workspace, raw)


def test_nul_byte_is_refused(workspace: Path) -> None:
    assert "NUL" in refused(workspace, "a\x00b")


def test_name_too_long_for_the_filesystem_gets_a_clear_error(workspace: Path) -> None:
    for for_write in (False, True):
        message = refused(workspace, "a" * 300 + ".txt", for_write=for_write)
        assert "304 characters long" in message
        assert "at most" in message


@pytest.mark.parametrize("raw", [".git/config", ".git/hooks/pre-commit", "sub/.git/HEAD", ".git", ".GIT/config"])
def test_git_internals_are_protected_for_writes(workspace: Path, raw: str) -> None:
    assert "is protected" in refused(workspace, raw, for_write=True)


def test_protected_message_names_the_path(workspace: Path) -> None:
    assert refused(workspace, ".git/config", for_write=True) == "refused: .git/config is protected"


@pytest.mark.parametrize("raw", [".paicli/x", ".paicli/config.toml", ".paicli/plans/p1.json"])
def test_paicli_folder_is_protected_for_writes(workspace: Path, raw: str) -> None:
    assert "is protected" in refused(workspace, raw, for_write=True)


def test_symlink_into_git_is_protected_for_writes(workspace: Path) -> None:
    (workspace / ".git").mkdir()
    (workspace / ".git" / "config").write_text("[core]\n")
    (workspace / "innocent").symlink_to(workspace / ".git" / "config")
    assert "is protected" in refused(workspace, "innocent", for_write=True)


def test_protected_paths_can_still_be_read(workspace: Path) -> None:
    (workspace / ".git").mkdir()
    assert resolve_in_workspace(workspace, ".git/config", for_write=False).name == "config"


def test_gitignore_and_github_are_not_protected(workspace: Path) -> None:
    resolve_in_workspace(workspace, ".gitignore", for_write=True)
    resolve_in_workspace(workspace, ".github/workflows/ci.yml", for_write=True)


def test_display_path_is_relative_to_the_workspace(workspace: Path) -> None:
    root = Path(os.path.realpath(workspace))
    assert display_path(workspace, root / "a" / "b.txt") == "a/b.txt"
    assert display_path(workspace, root) == "."
