"""Tool caches in a read-only workspace (issue 29): a task that declares no files still runs pytest, mypy and
ruff on a package with nested folders in real bubblewrap. Existing caches at any depth are writable; a cache
the workspace lacks at its top goes to the command's private /tmp; nothing else becomes writable through
them."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from paicli.sandbox import BwrapSandbox
from paicli.sandbox.writable import MAX_CACHES, cache_environment, tool_caches
from tests.sandbox.test_declared_files import in_task, run

# Python as a project's commands run it: bytecode written beside the sources (the test run may send it
# elsewhere), and not the plugins of paicli's own tests.
PYTHON = f"env -u PYTHONPYCACHEPREFIX -u PYTHONDONTWRITEBYTECODE {sys.executable}"
PYTEST = f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {PYTHON} -m pytest -q"


def nested_package(workspace: Path) -> None:
    for folder in ("pkg/sub/deeper", "tests/unit"):
        (workspace / folder).mkdir(parents=True)
    for init in ("pkg", "pkg/sub", "pkg/sub/deeper", "tests", "tests/unit"):
        (workspace / init / "__init__.py").write_text("")
    (workspace / "pkg/sub/deeper/mod.py").write_text("def f() -> int:\n    return 1\n")
    (workspace / "tests/unit/test_mod.py").write_text(
        "from pkg.sub.deeper.mod import f\n\n\ndef test_f() -> None:\n    assert f() == 1\n"
    )
    # warnings are errors, as in many projects: a cache pytest could not write would fail the run
    (workspace / "pyproject.toml").write_text('[tool.pytest.ini_options]\nfilterwarnings = ["error"]\n')


async def test_pytest_mypy_and_ruff_run_in_a_task_that_declares_nothing(workspace: Path, sandbox: BwrapSandbox) -> None:
    nested_package(workspace)
    ctx = in_task(workspace, sandbox, None)
    for command in (
        PYTEST,
        f"{PYTHON} -m mypy --strict pkg",
        f"{PYTHON} -m ruff check pkg",
        f"cd pkg && {PYTHON} -m ruff check .",  # a cache where it is run from, not the top
    ):
        output = await run(ctx, command)
        assert output.endswith("exit code 0"), (command, output)
        assert "read-only file system" not in output.lower(), (command, output)
    assert sorted(p.name for p in workspace.iterdir()) == ["pkg", "pyproject.toml", "tests"]  # nothing left


async def test_a_failing_test_is_a_failure_not_the_sandbox(workspace: Path, sandbox: BwrapSandbox) -> None:
    nested_package(workspace)
    (workspace / "tests/unit/test_mod.py").write_text("def test_f() -> None:\n    assert 1 == 2\n")
    output = await run(in_task(workspace, sandbox, None), PYTEST)
    assert not output.startswith("BLOCKED") and "1 failed" in output and "exit code 1" in output, output


async def test_existing_caches_at_any_depth_are_written(workspace: Path, sandbox: BwrapSandbox) -> None:
    """Nested caches that exist are writable; pytest, mypy and ruff run from a subfolder use the workspace's
    own cache at its top."""
    nested_package(workspace)
    for cache in (
        "pkg/sub/deeper/__pycache__",
        "tests/unit/.pytest_cache",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
    ):
        (workspace / cache).mkdir()
    ctx = in_task(workspace, sandbox, None)
    output = await run(ctx, f"cd tests/unit && {PYTEST} --rootdir=. && echo kept > .pytest_cache/mine")
    assert output.endswith("exit code 0"), output
    assert any((workspace / ".pytest_cache").rglob("nodeids"))
    assert (workspace / "tests/unit/.pytest_cache/mine").read_text() == "kept\n"
    assert any(p.name.startswith("mod.") for p in (workspace / "pkg/sub/deeper/__pycache__").iterdir())
    output = await run(ctx, f"cd pkg && {PYTHON} -m mypy . && {PYTHON} -m ruff check .")
    assert output.endswith("exit code 0"), output
    assert any((workspace / ".mypy_cache").iterdir()) and any((workspace / ".ruff_cache").iterdir())
    assert sorted(p.name for p in (workspace / "pkg").iterdir()) == ["__init__.py", "sub"]


async def test_a_cache_name_opens_nothing_else(workspace: Path, sandbox: BwrapSandbox, tmp_path: Path) -> None:
    """Attacker shapes: a cache that is a symlink (to a source folder, out of the workspace), a file named
    like a cache, caches inside .git/ and .paicli/, and `..` out of a real cache."""
    nested_package(workspace)
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(workspace / "pkg", workspace / "tests" / "__pycache__")
    os.symlink(outside, workspace / ".pytest_cache")
    (workspace / "pkg" / ".mypy_cache").write_text("a file\n")
    for inside in (".git/__pycache__", ".paicli/.pytest_cache", "pkg/sub/__pycache__"):
        (workspace / inside).mkdir(parents=True)
    ctx = in_task(workspace, sandbox, None)
    for command in (
        "echo x > tests/__pycache__/evil.py",  # = pkg/evil.py
        "echo x > .pytest_cache/evil",  # = outside/evil
        "echo x > pkg/.mypy_cache",
        "echo x > .git/__pycache__/hook",
        "echo x > .paicli/.pytest_cache/v",
        "echo x > pkg/sub/__pycache__/../evil.py",
    ):
        output = await run(ctx, command)
        assert output.startswith("BLOCKED") or "exit code 0" not in output, (command, output)
    assert not (workspace / "pkg" / "evil.py").exists() and list(outside.iterdir()) == []
    assert (workspace / "pkg" / ".mypy_cache").read_text() == "a file\n"
    assert list((workspace / ".git/__pycache__").iterdir()) == []
    assert not (workspace / "pkg/sub/evil.py").exists()
    output = await run(ctx, "echo fine > pkg/sub/__pycache__/x.pyc")
    assert output.endswith("exit code 0"), output


def test_caches_bound_are_the_shallowest_and_not_nested(tmp_path: Path) -> None:
    found = [tmp_path / f"d{i}" / "sub" / "__pycache__" for i in range(MAX_CACHES + 50)]
    found += [tmp_path / ".pytest_cache", tmp_path / ".pytest_cache" / "v" / "__pycache__"]
    kept = tool_caches(found)
    assert len(kept) == MAX_CACHES and kept[0] == tmp_path / ".pytest_cache"
    assert tmp_path / ".pytest_cache" / "v" / "__pycache__" not in kept


@pytest.mark.parametrize(
    ("config", "command", "addopts", "pointed"),
    [
        ("", "pytest", None, True),
        ("", "pytest", "-x", True),  # the user's options are kept
        ('[tool.pytest.ini_options]\naddopts = "-p no:cacheprovider"\n', "pytest", None, False),
        ("", "pytest -p no:cacheprovider", None, False),
        ("", "pytest", "-p no:cacheprovider", False),
    ],
)
def test_pytest_is_pointed_at_one_cache_only_where_it_keeps_one(
    tmp_path: Path, config: str, command: str, addopts: str | None, pointed: bool
) -> None:
    (tmp_path / "pyproject.toml").write_text(config)
    env = {"PYTEST_ADDOPTS": addopts} if addopts is not None else {}
    extra = cache_environment(tmp_path, command, env)
    assert ("cache_dir=/tmp/paicli-caches/.pytest_cache" in extra.get("PYTEST_ADDOPTS", "")) is pointed
    if pointed and addopts:
        assert extra["PYTEST_ADDOPTS"].startswith(addopts + " ")
    assert extra["MYPY_CACHE_DIR"] == "/tmp/paicli-caches/.mypy_cache"


def test_the_workspaces_own_caches_are_used_and_the_users_variables_kept(tmp_path: Path) -> None:
    (tmp_path / ".pytest_cache").mkdir()
    (tmp_path / ".mypy_cache").mkdir()
    os.symlink(tmp_path / ".mypy_cache", tmp_path / ".ruff_cache")  # a link is no cache of the workspace's
    extra = cache_environment(tmp_path, "pytest", {"RUFF_CACHE_DIR": "/home/me/.cache/ruff"})
    assert extra == {
        "MYPY_CACHE_DIR": str(tmp_path / ".mypy_cache"),
        "PYTEST_ADDOPTS": f"-o cache_dir={tmp_path}/.pytest_cache",
    }
    assert cache_environment(tmp_path, "ruff", {})["RUFF_CACHE_DIR"] == "/tmp/paicli-caches/.ruff_cache"
