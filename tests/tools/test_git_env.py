"""git_env: which configuration every command's git gets, and whose values win."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from paicli.tools.git_env import (
    NO_EXTERNAL_DIFF,
    GitConfigView,
    git_safety_environment,
    parse_scoped_listing,
    program_outside,
    read_git_config,
)


def entries(env: dict[str, str]) -> list[tuple[str, str]]:
    count = int(env["GIT_CONFIG_COUNT"])
    return [
        (env[f"GIT_CONFIG_KEY_{i}"], env[f"GIT_CONFIG_VALUE_{i}"]) for i in range(count) if f"GIT_CONFIG_KEY_{i}" in env
    ]


def value(env: dict[str, str], key: str) -> str:
    return [v for k, v in entries(env) if k == key][-1]


def test_neutral_values_without_any_user_configuration() -> None:
    env = git_safety_environment({}, GitConfigView())
    assert value(env, "safe.bareRepository") == "explicit"
    assert value(env, "core.fsmonitor") == "false"
    assert value(env, "core.hooksPath") == "/dev/null"
    assert value(env, "core.sshCommand") == "ssh"
    assert value(env, "credential.helper") == ""
    assert value(env, "protocol.ext.allow") == "never"
    assert "diff.external" not in dict(entries(env))  # any value would take over every diff
    assert env["GIT_PAGER"] == "cat" and env["GIT_TERMINAL_PROMPT"] == "0" and env["GIT_PROXY_COMMAND"] == ""


def test_the_users_own_values_come_back_after_the_reset() -> None:
    view = GitConfigView(
        trusted={
            "credential.helper": ["osxkeychain", "store"],
            "core.sshcommand": ["ssh -i work"],
            "safe.barerepository": ["all"],
        },
    )
    pairs = entries(git_safety_environment({}, view))
    helpers = [v for k, v in pairs if k == "credential.helper"]
    assert helpers == ["", "osxkeychain", "store"]
    assert dict(pairs)["core.sshCommand"] == "ssh -i work"
    assert dict(pairs)["safe.bareRepository"] == "explicit"  # forced, whatever the user says


def test_a_repository_diff_external_is_replaced_by_the_users_or_refused() -> None:
    repo_only = GitConfigView(from_repository=frozenset({"diff.external"}))
    assert value(git_safety_environment({}, repo_only), "diff.external") == NO_EXTERNAL_DIFF
    both = GitConfigView(trusted={"diff.external": ["difft"]}, from_repository=frozenset({"diff.external"}))
    assert value(git_safety_environment({}, both), "diff.external") == "difft"


def test_entries_go_after_those_of_the_users_environment() -> None:
    base = {
        "GIT_CONFIG_COUNT": "2",
        "GIT_CONFIG_KEY_0": "user.name",
        "GIT_CONFIG_VALUE_0": "Ada",
        "GIT_CONFIG_KEY_1": "core.fsmonitor",
        "GIT_CONFIG_VALUE_1": "watchman-hook",
    }
    added = git_safety_environment(base, GitConfigView())
    assert "GIT_CONFIG_KEY_0" not in added and "GIT_CONFIG_KEY_1" not in added
    assert added["GIT_CONFIG_KEY_2"] == "safe.bareRepository"
    assert value(base | added, "core.fsmonitor") == "false"


def test_the_users_git_ssh_and_proxy_are_kept() -> None:
    added = git_safety_environment({"GIT_SSH": "/opt/my ssh", "GIT_PROXY_COMMAND": "corkscrew"}, GitConfigView())
    assert value(added, "core.sshCommand") == "'/opt/my ssh'"
    assert "GIT_PROXY_COMMAND" not in added


def test_parsing_keeps_scopes_apart() -> None:
    listing = (
        b"global\0credential.helper\nstore\0local\0credential.helper\n!evil\0"
        b"system\0core.fsmonitor\0local\0diff.external\nsh -c x\0command\0core.hookspath\n/hooks\0"
    )
    view = parse_scoped_listing(listing)
    assert view.trusted == {"credential.helper": ["store"], "core.fsmonitor": ["true"], "core.hookspath": ["/hooks"]}
    assert view.from_repository == {"credential.helper", "diff.external"}


@pytest.mark.parametrize("listing", [b"", b"global", b"\0\0\0", b"local\0\xff\xfe\nx\0"])
def test_parsing_odd_output_does_not_fail(listing: bytes) -> None:
    parse_scoped_listing(listing)


def test_reading_real_configuration(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[credential]\n\thelper = store\n[core]\n\thooksPath = /my/hooks\n")
    repo = tmp_path / "repo"
    env = {"HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1", "PATH": "/usr/bin:/bin"}
    subprocess.run(["git", "init", "-q", str(repo)], env=env, check=True)
    with (repo / ".git" / "config").open("a") as config:
        config.write("[credential]\n\thelper = !evil\n[diff]\n\texternal = evil\n")
    view = read_git_config(repo, env)
    assert view.trusted == {"credential.helper": ["store"], "core.hookspath": ["/my/hooks"]}
    assert view.from_repository == {"credential.helper", "diff.external"}


def test_no_git_or_no_repository_gives_an_empty_view(tmp_path: Path) -> None:
    assert read_git_config(tmp_path, {"PATH": str(tmp_path), "HOME": str(tmp_path)}) == GitConfigView()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1"}
    assert read_git_config(tmp_path, env) == GitConfigView()


def test_a_lookup_that_fails_overrides_diff_external_all_the_same(tmp_path: Path) -> None:
    """A git that cannot answer (here: a stand-in that fails) must not leave a repository's program in place."""
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "git").write_text("#!/bin/sh\nexit 129\n")
    (tmp_path / "bin" / "git").chmod(0o755)
    (tmp_path / "ws").mkdir()
    view = read_git_config(tmp_path / "ws", {"PATH": str(tmp_path / "bin"), "HOME": str(tmp_path)})
    assert value(git_safety_environment({}, view), "diff.external") == NO_EXTERNAL_DIFF


def test_a_git_inside_the_workspace_is_never_the_one_paicli_runs(tmp_path: Path) -> None:
    """paicli runs `git config` itself, outside any sandbox: a `git` a command left in an activated
    in-repo `.venv/bin` (or found through a relative PATH entry) must not be it."""
    workspace = tmp_path / "ws"
    (workspace / ".venv" / "bin").mkdir(parents=True)
    planted = workspace / ".venv" / "bin" / "git"
    planted.write_text(f"#!/bin/sh\ntouch {tmp_path}/pwned\nexit 1\n")
    planted.chmod(0o755)
    (workspace / "git").write_text(planted.read_text())
    (workspace / "git").chmod(0o755)
    env = {"PATH": f"{workspace / '.venv' / 'bin'}:.:/usr/bin:/bin", "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1"}
    read_git_config(workspace, env)
    assert not (tmp_path / "pwned").exists()
    assert program_outside("git", workspace, env["PATH"]) in ("/usr/bin/git", "/bin/git", None)


def test_git_c_settings_in_paicli_s_environment_do_not_undo_the_entries(tmp_path: Path) -> None:
    """`git -c` settings travel in GIT_CONFIG_PARAMETERS, which git reads after the GIT_CONFIG_COUNT
    entries (the last value wins): the entries go there too, quoted as git quotes them, so the forced values
    and, for a view that keeps no user value (the file lister's), the neutral ones hold; a user's own value
    the view trusts is still theirs. A quote inside a value survives."""
    home = tmp_path / "home"
    home.mkdir()
    repo = tmp_path / "repo"
    base = {"HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1", "PATH": "/usr/bin:/bin"}
    subprocess.run(["git", "init", "-q", str(repo)], env=base, check=True)
    base["GIT_CONFIG_PARAMETERS"] = "'core.fsmonitor'='/tmp/marker' 'protocol.ext.allow=always' 'x.y=kept'"

    def config(view: GitConfigView, key: str) -> str:
        env = base | git_safety_environment(base, view)
        done = subprocess.run(["git", "config", "--get", key], cwd=repo, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    neutral = GitConfigView()
    assert config(neutral, "core.fsmonitor") == "false" and config(neutral, "protocol.ext.allow") == "never"
    assert config(neutral, "x.y") == "kept"  # what paicli does not neutralise stays the user's
    quoted = GitConfigView(trusted={"core.sshcommand": ["ssh -o 'User=me'"], "core.fsmonitor": ["/tmp/marker"]})
    assert config(quoted, "core.sshCommand") == "ssh -o 'User=me'"
    assert config(quoted, "core.fsmonitor") == "/tmp/marker" and config(quoted, "protocol.ext.allow") == "never"
