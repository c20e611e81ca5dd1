"""Issue 19, class 2: git runs configuration the model (or an archive) wrote.

Two kinds of hostile repository, each with configuration that runs a program leaving a canary file
*outside* the workspace:
- a bare repository the model writes with write_file (`sub/HEAD`, `sub/objects/`, `sub/refs/`,
  `sub/config`), driven end to end through `paicli run --json` in auto and yolo;
- the workspace's own repository with a hostile `.git/config` and hooks (as an archive or an approved
  command could leave it), driven through the real tool box in yolo, so every command really runs.
Each variant first proves, with plain git and a plain environment, that its configuration does fire:
the protection, not a broken setup, is what keeps the canary away.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import paicli_env, run_paicli
from tests.fakellm import FakeLLM, Reply, has_tool_result
from tests.security.conftest import Session


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    return folder


@pytest.fixture(autouse=True)
def plain_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """No global git configuration of the machine's user in play."""
    home = tmp_path / "git-home"
    home.mkdir(exist_ok=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    yield home


def plain_git(command: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """The command as an unprotected agent would run it."""
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0"}
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=30)


def canaries(outside: Path) -> list[str]:
    return sorted(p.name for p in outside.iterdir())


# ---- a bare repository written by the model, end to end ------------------------------------------------


def bare_repository_files(outside: Path) -> dict[str, str]:
    touch = f"touch {outside}/canary"
    config = f"""[core]
\trepositoryformatversion = 0
\tbare = true
\tfsmonitor = "{touch}-fsmonitor; false"
\tpager = "{touch}-pager; cat"
\thooksPath = hooks
[diff]
\texternal = "{touch}-external-diff; false"
[diff "evil"]
\ttextconv = "{touch}-textconv; cat"
\tcommand = "{touch}-diff-command; false"
[filter "evil"]
\tclean = "{touch}-filter-clean; cat"
\tsmudge = "{touch}-filter-smudge; cat"
[alias]
\tst = "!{touch}-alias"
\tstatus = "!{touch}-alias-status"
"""
    return {
        "sub/HEAD": "ref: refs/heads/main\n",
        "sub/config": config,
        "sub/objects/info/placeholder": "",
        "sub/refs/heads/placeholder": "",
        "sub/info/attributes": "* diff=evil filter=evil\n",
        "sub/hooks/post-index-change": f"#!/bin/sh\n{touch}-hook\n",
        "sub/a": "one\n",
        "sub/b": "two\n",
    }


COMMANDS_IN_SUB = [
    "cd sub && git diff --no-index a b",
    "cd sub && git status",
    "cd sub && git log -p",
    "cd sub && git show",
    "cd sub && git blame a",
    "cd sub && git st",
    "git -C sub status",
    "git --no-pager -C sub diff --no-index a b",
    "cd sub && git diff",
]


@pytest.mark.parametrize("mode", ["auto", "yolo"])
def test_a_bare_repository_the_model_writes_runs_none_of_its_configuration(
    fake: FakeLLM, workspace: Path, home: Path, outside: Path, plain_home: Path, mode: str
) -> None:
    files = bare_repository_files(outside)
    writes = [("write_file", {"path": path, "content": content}) for path, content in files.items()]
    commands = [("execute_command", {"command": command}) for command in COMMANDS_IN_SUB]
    fake.on(has_tool_result("execute_command"), Reply.text("done"))
    fake.on(has_tool_result("write_file"), Reply.tool_calls(commands))
    fake.on("look at the repo", Reply.tool_calls(writes))
    env = paicli_env(fake, home, GIT_CONFIG_NOSYSTEM="1")

    args = ["-C", str(workspace), "run", "look at the repo", "--json", "--approval", mode, "--sandbox", "off"]
    done = run_paicli(args, env)

    assert done.code == 0, done.stderr
    results = done.of("tool_result")
    assert [r["ok"] for r in results[: len(writes)]] == [True] * len(writes), results
    executed = results[len(writes) :]
    ran = [r for r in executed if "exit code" in r["output"]]
    assert canaries(outside) == [], [r["output"] for r in ran]
    if mode == "auto":
        # The classifier's half: git below the workspace root may use a repository the model wrote, so it
        # needs approval, which auto never gives.
        assert ran == [] and all("needs approval" in r["output"] for r in executed), executed
    else:
        # The environment's half: everything runs, and an alias (`git st`) needs a human even in yolo.
        refused = [r for r in executed if "exit code" not in r["output"]]
        assert len(ran) == len(COMMANDS_IN_SUB) - 1 and "may be an alias" in refused[0]["output"], executed
        # git still works: it just does not open the bare repository
        assert any("-one" in r["output"] and "+two" in r["output"] for r in ran), [r["output"] for r in ran]

    # The repository is real and its configuration fires when git is pointed at it without paicli.
    os.chmod(workspace / "sub" / "hooks" / "post-index-change", 0o755)
    plain_git("cd sub && git diff --no-index a b; git st", workspace, plain_home)
    fired = set(canaries(outside))
    assert "canary-alias" in fired and fired & {"canary-external-diff", "canary-diff-command"}, fired


# ---- the workspace's own repository with a hostile config, through the tool box --------------------------


def git_init(workspace: Path, home: Path) -> None:
    script = (
        "git init -q -b main . && echo x > f && echo 'f diff=evil filter=evil' > .gitattributes && "
        "git add -A && git -c user.name=a -c user.email=b@c commit -qm one"
    )
    done = plain_git(script, workspace, home)
    assert done.returncode == 0, done.stderr


def sign_head(workspace: Path, home: Path) -> None:
    """Replace HEAD by a commit carrying a (bogus) signature, so --show-signature calls gpg.program."""
    tree = plain_git("git rev-parse 'HEAD^{tree}'", workspace, home).stdout.strip()
    commit = (
        f"tree {tree}\nauthor a <b@c> 1 +0000\ncommitter a <b@c> 1 +0000\n"
        "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n\nsigned\n"
    )
    (workspace.parent / "commit.txt").write_text(commit)
    done = plain_git(
        f"git update-ref HEAD $(git hash-object -t commit -w {workspace.parent}/commit.txt)", workspace, home
    )
    assert done.returncode == 0, done.stderr


def hostile_config(outside: Path) -> str:
    touch = f"touch {outside}/canary"
    program = outside.parent / "gpg-stand-in"
    program.write_text(f"#!/bin/sh\n{touch}-gpg\nexit 1\n")
    program.chmod(0o755)
    return f"""[core]
\tfsmonitor = "{touch}-fsmonitor; false"
\tpager = "{touch}-pager; cat"
\tsshCommand = "{touch}-ssh; false"
\taskPass = "{outside.parent}/askpass"
[diff]
\texternal = "{touch}-external-diff; false"
[credential]
\thelper = "!{touch}-credential-helper; false"
[credential "https://example.invalid"]
\thelper = "!{touch}-credential-url-helper; false"
[gpg]
\tprogram = {program}
[log]
\tshowSignature = true
[protocol]
\tallow = always
[remote "evil"]
\turl = "ext::sh -c touch% {outside}/canary-ext% >&2"
[alias]
\tstatus = "!{touch}-alias"
"""


# (command, the canary it fires without protection)
WORKSPACE_REPO_VARIANTS = [
    ("touch -d @1000000000 f; git status", "canary-fsmonitor"),  # also the post-index-change hook (canary-hook)
    ("echo more >> f; git diff", "canary-external-diff"),
    ("script -qec 'git log' /dev/null", "canary-pager"),
    ("git log -1", "canary-gpg"),
    ("printf 'url=https://example.invalid\\n\\n' | git credential fill", "canary-credential-url-helper"),
    ("printf 'url=https://elsewhere.invalid\\n\\n' | git credential fill", "canary-credential-helper"),
    ("git ls-remote ssh://127.0.0.1:1/x", "canary-ssh"),
    ("git ls-remote evil", "canary-ext"),
]


@pytest.fixture
def hostile_workspace_repo(workspace: Path, outside: Path, plain_home: Path) -> Path:
    git_init(workspace, plain_home)
    sign_head(workspace, plain_home)
    with (workspace / ".git" / "config").open("a") as config:
        config.write(hostile_config(outside))
    (outside.parent / "askpass").write_text(f"#!/bin/sh\ntouch {outside}/canary-askpass\n")
    (outside.parent / "askpass").chmod(0o755)
    hook = workspace / ".git" / "hooks" / "post-index-change"
    hook.write_text(f"#!/bin/sh\ntouch {outside}/canary-hook\n")
    hook.chmod(0o755)
    return workspace


@pytest.mark.parametrize(("command", "fires"), WORKSPACE_REPO_VARIANTS)
async def test_a_hostile_repository_config_runs_nothing_through_the_tool_box(
    session_factory: Any, hostile_workspace_repo: Path, outside: Path, plain_home: Path, command: str, fires: str
) -> None:
    session: Session = session_factory("yolo")
    outcome = await session.run(command)
    assert "exit code" in outcome.output, outcome.output
    assert canaries(outside) == [], outcome.output

    plain_git(command, hostile_workspace_repo, plain_home)
    assert fires in canaries(outside), "the variant's configuration does not fire even without paicli"


ASKPASS = "printf 'url=https://x.invalid\\n\\n' | git -c credential.helper= credential fill"


async def test_the_post_index_change_hook_and_askpass_do_not_run(
    session_factory: Any, hostile_workspace_repo: Path, outside: Path, plain_home: Path
) -> None:
    session: Session = session_factory("yolo")
    status = await session.run("touch -d @1000000000 f; git status")
    fill = await session.run(ASKPASS)
    assert "nothing to commit" in status.output and "terminal prompts disabled" in fill.output
    assert canaries(outside) == []

    plain_git("touch -d @1000000000 f; git status", hostile_workspace_repo, plain_home)
    plain_git(ASKPASS, hostile_workspace_repo, plain_home)
    assert {"canary-hook", "canary-askpass"} <= set(canaries(outside))


async def test_everyday_git_still_works_and_the_users_own_settings_apply(
    session_factory: Any, workspace: Path, plain_home: Path
) -> None:
    (plain_home / ".gitconfig").write_text(
        "[user]\n\tname = Ada\n\temail = ada@example.com\n[credential]\n\thelper = store --file=creds\n"
    )
    git_init(workspace, plain_home)
    session: Session = session_factory("yolo")
    (workspace / "f").write_text("changed\n")
    diff = await session.run("git diff")
    assert "-x" in diff.output and "+changed" in diff.output and "exit code 0" in diff.output
    commit = await session.run("git commit -qam two && git log -1 --format=%an")
    assert "Ada" in commit.output and "exit code 0" in commit.output
    helpers = await session.run("git config --get-all credential.helper")
    assert helpers.output.splitlines()[-2] == "store --file=creds", helpers.output


async def test_a_nested_git_folder_cannot_be_written_with_file_tools(session_factory: Any) -> None:
    session: Session = session_factory("yolo")
    for path in ("sub/.git/config", "sub/.git", "sub/.GIT/config", "sub/.Git"):
        outcome = await session.call("write_file", path=path, content="gitdir: ../evil\n")
        assert not outcome.ok and "protected" in outcome.output, (path, outcome.output)
