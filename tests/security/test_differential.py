"""Differential test of the classifier against bash itself (issue 19): seeded commands that try to hide a
payload behind comments, here-documents, quotes, substitutions, continuations and globs over hostile file
names. Every one the classifier calls SAFE runs for real in a throwaway copy of a workspace with canaries
(and a canary folder outside it); a SAFE command that changed anything is a failure. More cases run in
`python -m bench shelldiff`."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from paicli.policy.classify import Risk
from tests.security.shellgen import MARKERS, execute, generate, hidden_commands, make_template, run_case

CASES = 300
HIDING_CASES = 150
SEED = 19


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_template(tmp_path_factory.mktemp("differential"))


def test_the_runner_sees_every_kind_of_change(template: Path, tmp_path: Path) -> None:
    """The control: the payloads, run unclassified, are all seen (so a quiet run means something)."""
    for payload, changed in [
        ("touch PWN", "ws/PWN"),
        ("touch ../outside/PWN", "outside/PWN"),
        ("rm -f canary.txt", "ws/canary.txt"),
        ("chmod 600 canary.txt", "ws/canary.txt"),
        ("sort --compress-program=sh -S1k payload | head -1", "ws/PWN"),
    ]:
        assert changed in execute(payload, template, tmp_path / "scratch"), payload


def test_no_command_called_safe_changes_anything(template: Path, tmp_path: Path) -> None:
    rng = random.Random(SEED)
    risks: Counter[Risk] = Counter()
    failures = []
    for _ in range(CASES):
        outcome = run_case(generate(rng), template, tmp_path / "scratch")
        risks[outcome.risk] += 1
        if outcome.changed:
            failures.append((outcome.command, outcome.changed))
    assert failures == []
    # the generator reaches every verdict, and enough SAFE commands run to make the check mean something
    assert risks[Risk.SAFE] >= CASES // 10 and risks[Risk.ASK] and risks[Risk.OPAQUE] and risks[Risk.DENY] == 0


def test_no_command_bash_runs_is_hidden_from_the_walk(template: Path, tmp_path: Path) -> None:
    """Every command line (but those the classifier already fails closed on) runs for real, with marker
    commands bash reports when it tries them: each one it runs must be one the denylist, the classifier
    and the deny rules saw."""
    rng = random.Random(SEED + 1)
    checked, hidden = 0, []
    for _ in range(HIDING_CASES):
        command = generate(rng, MARKERS)
        missed = hidden_commands(command, template, tmp_path / "scratch")
        if missed is None:
            continue
        checked += 1
        if missed:
            hidden.append((command, missed))
    assert hidden == []
    assert checked >= HIDING_CASES // 2


def test_the_hiding_check_sees_a_marker_bash_runs(template: Path, tmp_path: Path) -> None:
    """The control: a marker the walk cannot reach (a command name held in a variable) is reported, and such a
    command line is one the classifier fails closed on (so the run above leaves it out)."""
    scratch = tmp_path / "scratch"
    assert hidden_commands("x=pwnmark1; $x", template, scratch, only_readable=False) == ["pwnmark1"]
    assert hidden_commands("x=pwnmark1; $x", template, scratch) is None
    assert hidden_commands("echo pwnmark1; pwnmark2 x", template, scratch) == []
