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
from tests.security.shellgen import execute, generate, make_template, run_case

CASES = 300
SEED = 19


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_template(tmp_path_factory.mktemp("differential"))


def test_the_runner_sees_every_kind_of_change(template: Path, tmp_path: Path) -> None:
    """The control: the payloads, run unclassified, are all seen (so a quiet run means something)."""
    for payload, changed in [("touch PWN", "ws/PWN"), ("touch ../outside/PWN", "outside/PWN"),
                             ("rm -f canary.txt", "ws/canary.txt"), ("chmod 600 canary.txt", "ws/canary.txt"),
                             ("sort --compress-program=sh -S1k payload | head -1", "ws/PWN")]:  # fmt: skip
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
