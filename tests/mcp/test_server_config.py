"""MCP servers in the configuration: [mcp_servers.NAME] tables, ${VAR}, a workspace's .mcp.json and trust."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paicli.common.errors import ConfigError
from paicli.config_sources import load_settings
from paicli.mcp.server_config import McpServerConfig, expand, expanded, servers_from_mcp_json
from paicli.trust import TrustRequest
from tests.conftest import unexpected_warning

HOME_SERVERS = """
[mcp_servers.git]
command = "mcp-server-git"
args = ["--repository", "."]
env = { GIT_PAGER = "cat" }
tool_timeout = 5
[mcp_servers.tracker]
url = "http://127.0.0.1:9000/mcp"
headers = { Authorization = "Bearer ${TRACKER_TOKEN}" }
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_servers_from_the_user_config(workspace: Path, home: Path) -> None:
    write(home / ".paicli" / "config.toml", HOME_SERVERS)
    servers = load_settings(workspace=workspace, env={}, home=home, warn=unexpected_warning).mcp_servers
    assert list(servers) == ["git", "tracker"]
    git, tracker = servers["git"], servers["tracker"]
    assert git.transport == "stdio" and git.args == ["--repository", "."] and git.tool_timeout == 5
    assert tracker.transport == "http" and tracker.startup_timeout == 30 and not tracker.trust_annotations


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('[mcp_servers.x]\nargs = ["a"]\n', "needs command"),
        ('[mcp_servers.x]\ncommand = "a"\nurl = "http://h/mcp"\n', "not both"),
        ('[mcp_servers.x]\nurl = "ftp://h"\n', "http://"),
        ('[mcp_servers.x]\ncommand = "a"\ntype = "sse"\n', "needs a url"),
        ('[mcp_servers.x]\ncommand = "a"\nport = 3\n', "port"),
        ('[mcp_servers.x]\ncommand = "a"\ntool_timeout = 0\n', "tool_timeout"),
        ('[mcp_servers."a__b"]\ncommand = "a"\n', "no __"),
        ('[mcp_servers."git_"]\ncommand = "a"\n', "not ending with _"),
        ('[mcp_servers."a.b"]\ncommand = "a"\n', "letters, digits"),
    ],
)
def test_a_bad_server_is_a_configuration_error(workspace: Path, home: Path, table: str, message: str) -> None:
    write(home / ".paicli" / "config.toml", table)
    with pytest.raises(ConfigError, match="mcp_servers") as raised:
        load_settings(workspace=workspace, env={}, home=home, warn=unexpected_warning)
    assert message in str(raised.value)


def test_a_disabled_server_needs_no_command() -> None:
    assert not McpServerConfig(enabled=False).enabled


def test_variables_expand_in_args_env_url_and_headers_only() -> None:
    config = McpServerConfig(command="${TOOL}", args=["--token", "${T}", "${MISSING:-fallback}"], env={"A": "x${T}y"})
    done = expanded(config, {"T": "abc", "TOOL": "no"})
    assert done.command == "${TOOL}" and done.args == ["--token", "abc", "fallback"] and done.env == {"A": "xabcy"}
    http = expanded(McpServerConfig(url="http://h:${PORT}/mcp", headers={"X": "${T}"}), {"PORT": "9", "T": "t"})
    assert http.url == "http://h:9/mcp" and http.headers == {"X": "t"}
    with pytest.raises(ValueError, match=r"\$\{TRACKER_TOKEN\} is not set"):
        expand("Bearer ${TRACKER_TOKEN}", {})


def test_mcp_json_in_the_claude_code_format() -> None:
    raw = json.dumps(
        {
            "mcpServers": {
                "fs": {"command": "npx", "args": ["-y", "server-fs", "."], "env": {"A": "1"}},
                "remote": {"type": "http", "url": "https://h/mcp", "headers": {"X": "y"}},
                "old": {"type": "sse", "url": "https://h/sse"},
                "odd": {"type": "websocket", "url": "wss://h"},
                "bad name!": {"command": "x"},
                "extra": {"command": "x", "timeout": 5},
            }
        }
    ).encode()
    servers, problems = servers_from_mcp_json(raw)
    assert list(servers) == ["fs", "remote", "old", "extra"]
    assert servers["fs"].transport == "stdio" and servers["remote"].transport == "http"
    assert servers["old"].transport == "sse"
    assert any("'odd'" in p and "websocket" in p for p in problems)
    assert any("'bad name!'" in p for p in problems)
    assert any("'extra'" in p and "ignored timeout" in p for p in problems)
    for junk in (b"[1]", b"{", b'{"mcpServers": 3}'):
        with pytest.raises(ValueError):
            servers_from_mcp_json(junk)


MCP_JSON = json.dumps({"mcpServers": {"repo": {"command": "repo-server"}, "git": {"command": "from-json"}}})


def test_an_untrusted_mcp_json_is_ignored_with_a_warning(workspace: Path, home: Path) -> None:
    write(workspace / ".mcp.json", MCP_JSON)
    warnings: list[str] = []
    settings = load_settings(workspace=workspace, env={}, home=home, warn=warnings.append)
    assert settings.mcp_servers == {}
    assert any(".mcp.json" in w and "not trusted" in w for w in warnings)


def test_a_trusted_mcp_json_adds_servers_and_a_config_file_wins(workspace: Path, home: Path) -> None:
    write(workspace / ".mcp.json", MCP_JSON)
    write(home / ".paicli" / "config.toml", HOME_SERVERS)
    asked: list[TrustRequest] = []

    def confirm(request: TrustRequest) -> bool:
        asked.append(request)
        return True

    servers = load_settings(
        workspace=workspace, env={}, home=home, confirm_trust=confirm, warn=unexpected_warning
    ).mcp_servers
    assert list(servers) == ["repo", "git", "tracker"]
    assert servers["git"].command == "mcp-server-git" and servers["repo"].command == "repo-server"
    assert len(asked) == 1 and "repo, git (every field below)" in next(iter(asked[0].values.values()))
    assert ("server repo command", "repo-server") in asked[0].fields
    # remembered: asked once per file version
    again = load_settings(workspace=workspace, env={}, home=home, warn=pytest.fail)
    assert "repo" in again.mcp_servers
    write(workspace / ".mcp.json", MCP_JSON.replace("repo-server", "other-server"))
    warnings: list[str] = []
    assert "repo" not in load_settings(workspace=workspace, env={}, home=home, warn=warnings.append).mcp_servers


def test_a_repository_config_needs_trust_for_its_servers(workspace: Path, home: Path) -> None:
    write(workspace / ".paicli" / "config.toml", '[mcp_servers.evil]\ncommand = "curl"\n')
    warnings: list[str] = []
    assert load_settings(workspace=workspace, env={}, home=home, warn=warnings.append).mcp_servers == {}
    assert any("mcp_servers" in w for w in warnings)
    asked: list[TrustRequest] = []
    settings = load_settings(
        workspace=workspace, env={}, home=home, confirm_trust=lambda r: asked.append(r) or True, warn=unexpected_warning
    )
    assert "evil" in settings.mcp_servers and asked[0].values["mcp_servers"] == "1 server: evil (every field below)"
    assert ("server evil command", "curl") in asked[0].fields


def test_a_symlinked_mcp_json_is_refused(workspace: Path, home: Path, tmp_path: Path) -> None:
    write(tmp_path / "elsewhere.json", MCP_JSON)
    (workspace / ".mcp.json").symlink_to(tmp_path / "elsewhere.json")
    warnings: list[str] = []
    settings = load_settings(workspace=workspace, env={}, home=home, warn=warnings.append, confirm_trust=lambda r: True)
    assert settings.mcp_servers == {} and any("symlink" in w for w in warnings)


def test_credentials_of_server_configs_are_masked(workspace: Path, home: Path) -> None:
    from paicli.runtime import secret_values

    db = '[mcp_servers.db]\ncommand = "db"\nenv = { DB_PASSWORD = "hunter2-long" }\n'
    write(home / ".paicli" / "config.toml", HOME_SERVERS + db)
    settings = load_settings(workspace=workspace, env={}, home=home, warn=unexpected_warning)
    secrets = secret_values(settings, {"TRACKER_TOKEN": "tt-0123456789", "HOME": "/home/someone"})
    assert {"tt-0123456789", "Bearer tt-0123456789", "hunter2-long"} <= set(secrets)
    assert "/home/someone" not in secrets


def test_paicli_without_servers_never_imports_the_sdk() -> None:
    import subprocess
    import sys

    probe = (
        "import sys, paicli.cli, paicli.config, paicli.runtime, paicli.headless, paicli.ui.repl; "
        "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'paicli.mcp.manager'))))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[]", done.stderr
