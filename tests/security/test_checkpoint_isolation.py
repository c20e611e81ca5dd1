"""The shadow repository of the checkpoints is isolated from the user's git: none of the user's global,
XDG or repository configuration, hooks, attributes, filters or GIT_* variables take effect, nothing of
the workspace's `.git` changes, and contents are stored byte for byte (no eol conversion, no filter)."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

from tests.conftest import paicli_env, run_paicli
from tests.fakellm import FakeLLM, Reply, all_of, has_tool_result


def tree_digest(folder: Path) -> dict[str, str]:
    """Every entry below `folder` with its content hash (files), target (links) or kind (folders)."""
    found: dict[str, str] = {}
    for path in sorted(folder.rglob("*")):
        key = str(path.relative_to(folder))
        if path.is_symlink():
            found[key] = "link:" + os.readlink(path)
        elif path.is_dir():
            found[key] = "dir"
        else:
            found[key] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def marker_program(tmp_path: Path, marker: Path) -> Path:
    program = tmp_path / "marker.sh"
    program.write_text(f"#!/bin/sh\necho \"$0 $*\" >> '{marker}'\ncat\n")
    program.chmod(0o755)
    return program


def hostile_config(program: Path) -> str:
    return (
        "[core]\n"
        f"\tfsmonitor = {program}\n\thooksPath = {program.parent / 'hooks'}\n\tautocrlf = true\n"
        f"\texcludesFile = {program.parent / 'excludes'}\n\tattributesFile = {program.parent / 'attributes'}\n"
        f'[filter "mark"]\n\tclean = {program} clean\n\tsmudge = {program} smudge\n\trequired = true\n'
        f'[diff "mark"]\n\ttextconv = {program} textconv\n\tcommand = {program} diff\n'
        f"[diff]\n\texternal = {program}\n"
        f"[gpg]\n\tprogram = {program}\n[commit]\n\tgpgSign = true\n"
        "[index]\n\tversion = 99\n"  # an index version git refuses: any use of this config fails loudly
    )


def test_the_users_git_setup_never_reaches_the_checkpoints_and_dot_git_is_untouched(
    fake: FakeLLM, workspace: Path, home: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "ran.log"
    program = marker_program(tmp_path, marker)
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for hook in ("pre-commit", "post-commit", "post-index-change", "reference-transaction", "post-checkout"):
        (hooks / hook).symlink_to(program)
    (tmp_path / "excludes").write_text("*.py\n")  # would leave the file out of checkpoints
    (tmp_path / "attributes").write_text("* filter=mark diff=mark\n")
    (home / ".gitconfig").write_text(hostile_config(program))
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".config" / "git" / "config").write_text(hostile_config(program))
    (home / ".config" / "git" / "attributes").write_text("* filter=mark\n")

    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | {"HOME": str(tmp_path / "nohome")}
    subprocess.run(["git", "init", "-q", str(workspace)], env=env, check=True)
    (workspace / ".git" / "config").write_text(
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n" + hostile_config(program)
    )
    for hook in ("pre-commit", "post-index-change", "reference-transaction"):
        (workspace / ".git" / "hooks" / hook).symlink_to(program)
    (workspace / ".gitattributes").write_text("* filter=mark diff=mark text eol=crlf\n")
    (workspace / "app.py").write_bytes(b"line one\r\nline two\n")
    git_before = tree_digest(workspace / ".git")

    script = "printf 'made\\r\\nby a command\\n' > made.py && printf 'x' >> app.py"
    fake.on(all_of("change things", has_tool_result("execute_command")), Reply.text("Changed."))
    fake.on(
        all_of("change things", has_tool_result("write_file")),
        Reply.tool_calls([("execute_command", {"command": script})]),
    )
    fake.on("change things", Reply.tool_calls([("write_file", {"path": "app.py", "content": "new\r\ncontent\n"})]))
    hostile_env = paicli_env(
        fake,
        home,
        GIT_DIR=str(workspace / ".git"),
        GIT_WORK_TREE=str(workspace),
        GIT_INDEX_FILE=str(workspace / ".git" / "index"),
        GIT_CONFIG_GLOBAL=str(home / ".gitconfig"),
        GIT_CONFIG_COUNT="1",
        GIT_CONFIG_KEY_0="core.fsmonitor",
        GIT_CONFIG_VALUE_0=str(program),
        GIT_CONFIG_PARAMETERS=f"'core.fsmonitor'='{program}'",
        GIT_ATTR_SOURCE="HEAD",
        GIT_OBJECT_DIRECTORY=str(workspace / ".git" / "objects"),
        XDG_CONFIG_HOME=str(home / ".config"),
    )
    done = run_paicli(["-C", str(workspace), "run", "change things", "--json", "--approval", "yolo"], hostile_env)
    assert done.code == 0, done.stderr
    changes = {c["path"]: (c["status"], c["added"], c["removed"]) for c in done.of("run_finished")[0]["changes"]}
    assert changes == {"app.py": ("modified", 3, 2), "made.py": ("created", 2, 0)}

    undo = run_paicli(["-C", str(workspace), "undo"], hostile_env)
    assert undo.code == 0, undo.stderr
    assert (workspace / "app.py").read_bytes() == b"line one\r\nline two\n"  # byte for byte: no eol, no filter
    assert not (workspace / "made.py").exists()
    redo = run_paicli(["-C", str(workspace), "undo", "--redo"], hostile_env)
    assert redo.code == 0, redo.stderr
    assert (workspace / "made.py").read_bytes() == b"made\r\nby a command\n"
    assert (workspace / "app.py").read_bytes() == b"new\r\ncontent\nx"

    assert not marker.exists(), marker.read_text()
    assert tree_digest(workspace / ".git") == git_before
