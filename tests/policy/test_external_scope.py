"""The plan contract for tools outside paicli's view (MCP tools that are not read-only): the workspace
paths their arguments name must be declared by the task; where none is named, only a COMMAND task may
call them."""

from __future__ import annotations

from pathlib import Path

import pytest

from paicli.policy.external_scope import external_out_of_scope, workspace_paths
from paicli.tools.effect import Effect
from paicli.tools.task_scope import TaskScope

EFFECTS = {
    "FILE_READ": frozenset({Effect.READ}),
    "ANALYSIS": frozenset({Effect.READ}),
    "VERIFICATION": frozenset({Effect.READ, Effect.EXECUTE}),
    "COMMAND": frozenset({Effect.READ, Effect.EXECUTE}),
    "FILE_WRITE": frozenset({Effect.READ, Effect.WRITE}),
}


def scope(kind: str, files: tuple[str, ...] | None = None) -> TaskScope:
    return TaskScope("t", kind, EFFECTS[kind], files)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("")
    (tmp_path / "README.md").write_text("")
    (tmp_path / "inside").symlink_to(tmp_path / "README.md")
    return tmp_path


@pytest.mark.parametrize("kind", ["FILE_READ", "ANALYSIS", "VERIFICATION", "FILE_WRITE"])
def test_a_call_naming_no_workspace_path_runs_only_in_a_command_task(kind: str, ws: Path) -> None:
    why = external_out_of_scope(scope(kind, ("src/",) if kind != "FILE_READ" else None), {"q": "hello"}, ws)
    assert why is not None and "names no workspace path" in why and kind in why
    assert external_out_of_scope(scope("COMMAND"), {"q": "hello"}, ws) is None
    assert external_out_of_scope(scope("COMMAND", ("src/",)), {"q": "hello"}, ws) is None


@pytest.mark.parametrize(
    "arguments",
    [
        {"path": "README.md"},  # by the argument's name
        {"target_file": "notes/new.txt"},  # a file that does not exist yet, named by its argument
        {"text": "README.md"},  # an existing file, whatever the argument's name
        {"uri": "file://{ws}/README.md"},
        {"where": "{ws}/README.md"},  # absolute
        {"nested": {"list": [{"dest": "../{name}/README.md"}]}},  # back into the workspace
        {"path": "inside"},  # a symlink: what it leads to counts
        {"path": "."},  # the whole workspace
        {"path": ".git/config"},
    ],
)
def test_a_named_path_outside_the_write_set_is_refused(arguments: dict[str, object], ws: Path) -> None:
    filled = _filled(arguments, ws)
    for task in (scope("FILE_WRITE", ("src/",)), scope("COMMAND", ("src/app.py",)), scope("VERIFICATION")):
        why = external_out_of_scope(task, filled, ws)
        assert why is not None and "is not among the paths it may change" in why, (task, filled)
    for task in (scope("FILE_READ"), scope("ANALYSIS")):
        assert external_out_of_scope(task, filled, ws) is not None


@pytest.mark.parametrize(
    "arguments",
    [{"path": "src/app.py"}, {"file": "src/new.py"}, {"uri": "file://{ws}/src/app.py"}, {"x": "src/app.py"}],
)
def test_a_named_path_inside_the_write_set_runs(arguments: dict[str, object], ws: Path) -> None:
    filled = _filled(arguments, ws)
    assert external_out_of_scope(scope("FILE_WRITE", ("src/",)), filled, ws) is None
    assert external_out_of_scope(scope("VERIFICATION", ("src/",)), filled, ws) is None
    assert external_out_of_scope(scope("FILE_WRITE", ("README.md",)), filled, ws) is not None


def test_without_files_a_writer_may_name_any_workspace_path_and_a_check_none(ws: Path) -> None:
    assert external_out_of_scope(scope("FILE_WRITE"), {"path": "README.md"}, ws) is None  # a legacy plan
    assert external_out_of_scope(scope("COMMAND"), {"path": "README.md"}, ws) is None
    assert external_out_of_scope(scope("VERIFICATION"), {"path": "README.md"}, ws) is not None


def test_paths_outside_the_workspace_and_plain_text_are_not_workspace_paths(ws: Path) -> None:
    arguments = {"text": "hello world", "path": "/etc/passwd", "n": 3, "other": "../elsewhere.txt", "uri": "https://x"}
    assert [raw for raw, _ in workspace_paths(arguments, ws)] == []


def _filled(arguments: dict[str, object], ws: Path) -> dict[str, object]:
    import json

    text = json.dumps(arguments).replace("{ws}", str(ws)).replace("{name}", ws.name)
    return dict(json.loads(text))
