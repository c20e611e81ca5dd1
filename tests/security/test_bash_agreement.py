"""Differential test of the classifier against bash itself (issue 27). Command lines drawn from a grammar of
bash (tests/security/bashgrammar.py) with a fixed seed are classified, and run by the real bash in the
probe (tests/security/bashprobe.py), where every program is a logging stand-in:

- SAFE and ASK: every program bash started is in the classification's `programs`;
- SAFE: bash wrote nothing, and every program it started is SAFE on its own with the argv it really got;
- OPAQUE and DENY: the classifier fails closed (counted, not run: nothing to compare).

A disagreement the seed finds is a regression case in test_bash_agreement_regressions.py, strict xfail
until the classifier is fixed; this test tolerates it only while its regression is still marked so.
`python -m bench fuzz-shell` runs the same check with fresh seeds and many more cases.
"""

from __future__ import annotations

import hashlib

from tests.security.bashagree import Checker, Pipeline, Tally
from tests.security.bashgrammar import for_each_batch
from tests.security.bashprobe import BashProbe
from tests.security.test_bash_agreement_regressions import OPEN, SEEN

SEED = 27
EXAMPLES = 275  # about 2,000 different lines (Hypothesis draws a few again)
CASES_PER_EXAMPLE = 8  # run as one batch in the sandbox while they are classified here
MINIMISED_AT_MOST = 3  # a new disagreement is minimised for the report (each costs up to 300 runs)


def case_key(command: str) -> str:
    """How SEEN names a case of the seed: the first 16 hex digits of the SHA-256 of its text."""
    return hashlib.sha256(command.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def run_the_seed(checker: Checker) -> Tally:
    """The seed's cases, drawn by Hypothesis (seed 27, no database, no deadline, generate phase only) in
    batches that run in the sandbox while the next is drawn and classified."""
    tally = Tally()
    pipeline = Pipeline(checker, tally)
    for_each_batch(SEED, EXAMPLES, CASES_PER_EXAMPLE, pipeline.feed)
    pipeline.finish()
    return tally


def test_bash_and_the_classifier_agree_on_the_seeds_command_lines(bash_probe: BashProbe) -> None:
    checker = Checker(bash_probe)
    tally = run_the_seed(checker)
    unexplained, minimised = [], 0
    for verdict in tally.disagreeing:
        if SEEN.get(case_key(verdict.command)) in OPEN:
            continue  # a case of the seed known to minimise to an open regression
        smaller = checker.minimise(verdict) if minimised < MINIMISED_AT_MOST else None
        minimised += smaller is not None
        if smaller is not None and smaller.command in OPEN:
            continue
        shown = smaller.report() if smaller is not None else "(not minimised)\n"
        unexplained.append(f"case {case_key(verdict.command)}\n{verdict.report()}minimised:\n{shown}")
    assert not unexplained, (
        f"{len(unexplained)} disagreement(s) of bash and the classifier; make each a regression case in "
        "test_bash_agreement_regressions.py (and its key a SEEN entry):\n\n" + "\n".join(unexplained)
    )
    # The generator is not degenerate: every verdict is reached, and bash really started programs.
    cases, run = tally.cases, tally.run
    assert cases + tally.repeated == EXAMPLES * CASES_PER_EXAMPLE and cases >= 1_900
    assert tally.risks["SAFE"] >= cases // 10, tally.risks
    assert tally.risks["ASK"] >= cases // 5, tally.risks
    assert tally.risks["OPAQUE"] >= cases // 10, tally.risks
    assert tally.started_programs >= run // 2, (tally.started_programs, run)
    assert tally.wrote >= run // 50, (tally.wrote, run)
    assert tally.refused <= run // 10, (tally.refused, run)  # most lines are bash
