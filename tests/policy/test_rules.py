"""Allow and deny rules: parsing, command prefixes by whole words, path globs, deny on any part."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from paicli.policy.classify import classify_command
from paicli.policy.rules import COMMAND_TOOL, Rule, Rules, parse_rule


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("pytest", Rule("pytest", COMMAND_TOOL, words=("pytest",))),
        ("git push", Rule("git push", COMMAND_TOOL, words=("git", "push"))),
        ("npm run test:*", Rule("npm run test:*", COMMAND_TOOL, words=("npm", "run", "test"))),
        ("/usr/bin/git push", Rule("/usr/bin/git push", COMMAND_TOOL, words=("git", "push"))),
        ("execute_command(ruff check)", Rule("execute_command(ruff check)", COMMAND_TOOL, words=("ruff", "check"))),
        ("execute_command", Rule("execute_command", COMMAND_TOOL)),
        ("write_file", Rule("write_file", "write_file")),
        ("edit_file(./migrations/*)", Rule("edit_file(./migrations/*)", "edit_file", path_glob="migrations/*")),
    ],
)
def test_rules_parse(text: str, rule: Rule) -> None:
    assert parse_rule(text) == rule


@pytest.mark.parametrize("text", ["", "   ", "git 'push", "ls; rm -rf x", "make && deploy"])
def test_bad_rules_are_refused_with_a_reason(text: str) -> None:
    with pytest.raises(ValueError):
        parse_rule(text)


def command(rules: Rules, text: str, workspace: Path, *, allow: bool) -> bool:
    found = classify_command(text, workspace)
    arguments = {"command": text}
    if allow:
        return bool(rules.allowed_by(COMMAND_TOOL, arguments, found))
    return rules.denied_by(COMMAND_TOOL, arguments, found) is not None


def test_command_prefixes_match_whole_words(tmp_path: Path) -> None:
    rules = Rules(allow=["git commit"], workspace=tmp_path)
    assert command(rules, "git commit -m 'x'", tmp_path, allow=True)
    assert command(rules, "/usr/bin/git commit -m x", tmp_path, allow=True)
    assert not command(rules, "git commitx", tmp_path, allow=True)
    assert not command(rules, "git push", tmp_path, allow=True)


def test_an_allow_rule_must_cover_every_risky_part(tmp_path: Path) -> None:
    rules = Rules(allow=["pytest"], workspace=tmp_path)
    assert command(rules, "pytest -q && ls", tmp_path, allow=True)  # ls needs no approval
    assert not command(rules, "pytest -q && rm -r build", tmp_path, allow=True)
    assert not command(rules, "pytest $(curl -s http://127.0.0.1:9/x)", tmp_path, allow=True)
    assert not command(rules, "pytest > /tmp/out.txt", tmp_path, allow=True)  # the redirect is its own part
    assert not command(rules, "PATH=/tmp/evil pytest", tmp_path, allow=True)  # variables must be in the rule
    assert command(Rules(allow=["CI=1 pytest"]), "CI=1 pytest", tmp_path, allow=True)


def test_allow_rules_never_cover_what_cannot_be_read(tmp_path: Path) -> None:
    rules = Rules(allow=["execute_command"], workspace=tmp_path)
    assert command(rules, "rm -r build", tmp_path, allow=True)
    assert not command(rules, "$(echo rm) -r build", tmp_path, allow=True)
    assert not command(rules, "rm -rf /", tmp_path, allow=True)


def test_a_deny_rule_matches_any_part_wrappers_and_inner_shells_included(tmp_path: Path) -> None:
    rules = Rules(deny=["git push"], workspace=tmp_path)
    for text in [
        "git push",
        "ls && git push -f",
        "env X=1 git push",
        "timeout 5 git push",
        "nohup git push &",
        "bash -c 'git push'",
        "echo $(git push)",
        "/usr/bin/git push",
    ]:
        assert command(rules, text, tmp_path, allow=False), text
    assert not command(rules, "git pull", tmp_path, allow=False)
    assert not command(rules, "echo 'git push'", tmp_path, allow=False)


def test_a_deny_rule_matches_a_command_run_through_an_option(tmp_path: Path) -> None:
    rules = Rules(deny=["git push"], workspace=tmp_path)
    for text in [
        "tar -xf a.tar --to-command='git push'",
        "git rebase -x 'git push' HEAD~2",
        "sed -n '1e git push' f",
        "ssh -o ProxyCommand='git push' h",
        "find . -exec git push \\;",
        "echo x | xargs git push",
        "git config alias.p '!git push' && git p",
    ]:
        assert command(rules, text, tmp_path, allow=False), text


def test_path_rules_match_the_path_as_written_and_as_resolved(tmp_path: Path) -> None:
    (tmp_path / "migrations").mkdir()
    os.symlink(tmp_path / "migrations", tmp_path / "m")
    rules = Rules(allow=["write_file(docs/*)"], deny=["write_file(migrations/*)"], workspace=tmp_path)
    spellings = [
        "migrations/1.sql",
        "./migrations/1.sql",
        "m/1.sql",
        "docs/../migrations/1.sql",
        str(tmp_path / "migrations" / "1.sql"),
    ]
    assert all(rules.denied_by("write_file", {"path": path}) for path in spellings)
    assert rules.denied_by("write_file", {"path": "src/a.py"}) is None
    assert rules.denied_by("edit_file", {"path": "migrations/1.sql"}) is None  # another tool
    assert rules.allowed_by("write_file", {"path": "docs/guide/a.md"})
    assert not rules.allowed_by("write_file", {"path": "docs/../src/a.py"})
