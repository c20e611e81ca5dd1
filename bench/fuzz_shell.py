"""The classifier against bash, fuzzed (issue 27): the differential test of
tests/security/test_bash_agreement.py with a fresh seed and many more cases.

Command lines drawn from the grammar of bash in tests/security/bashgrammar.py are classified, and those
called SAFE or ASK run by the real bash in the sandboxed probe (tests/security/bashprobe.py), where every
program is a logging stand-in and every write is seen (OPAQUE and DENY: the classifier fails closed). A
disagreement: a SAFE or ASK line that started a program its classification does not list, a SAFE line
that wrote something, or a SAFE line that started a program whose real argv is not SAFE on its own
(target 0). Reported: the seed (random, printed, recorded; `PAICLI_FUZZ_SEED` picks one), the cases
(20,000 lines drawn, or `PAICLI_FUZZ_CASES`; 160 with --quick; a line drawn again counts once), cases
per second, the verdicts, how many lines ran, started a program or wrote, and the disagreements and
their causes: up to 10 minimised lines, each made from a disagreement that no line minimised before
explains (not with --quick), with how many disagreements each explains, and up to 50 disagreements in
the JSON details. Where bubblewrap cannot run, the benchmark says why instead.
"""

from __future__ import annotations

import os
import random
import shlex
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import Result, rounded
from tests.security.bashagree import UNLISTED, UNSAFE_ARGV, Checker, Pipeline, Tally, Verdict
from tests.security.bashgrammar import MARKERS, for_each_batch
from tests.security.bashprobe import BashProbe, ProbeError

NAME = "fuzz-shell"
TITLE = "Command classifier against bash, fuzzed in the sandbox"
CASES = 20_000
QUICK_CASES = 160
BATCH = 8  # cases per Hypothesis example, run as one batch in the sandbox
EXAMPLES_PER_SEED = 100  # each Hypothesis run draws this many batches, from seed, seed + 1, ...
LISTED = 50
MINIMISED = 10


def run(*, quick: bool = False) -> Result:
    seed = int(os.environ.get("PAICLI_FUZZ_SEED") or random.SystemRandom().randrange(2**31))
    cases = QUICK_CASES if quick else int(os.environ.get("PAICLI_FUZZ_CASES") or CASES)
    print(f"  fuzz-shell: seed {seed}, {cases:,} cases", file=sys.stderr, flush=True)
    result = Result(NAME, TITLE)
    with (
        tempfile.TemporaryDirectory(prefix="paicli-fuzz-shell-") as folder,
        BashProbe(Path(folder), names=MARKERS) as probe,
    ):
        try:
            probe.run("true")
        except ProbeError as error:
            result.add("bash probe", f"not run: {error}")
            result.details = {"seed": seed, "problem": str(error)}
            return result
        checker = Checker(probe)
        tally = Tally()
        start = time.perf_counter()
        _draw(checker, tally, seed, cases)
        seconds = time.perf_counter() - start
        causes = _Causes(checker, minimise=0 if quick else MINIMISED)
        explained = [causes.explain(verdict) for verdict in tally.disagreeing]
    listed = _listed(tally.disagreeing, explained)
    risks = tally.risks
    result.add("seed", str(seed))
    result.add("cases run", tally.cases)
    result.add("cases per second", rounded(tally.cases / seconds))
    result.add("SAFE / ASK / OPAQUE / DENY", f"{risks['SAFE']} / {risks['ASK']} / {risks['OPAQUE']} / {risks['DENY']}")
    result.add("SAFE and ASK lines run in the sandbox", tally.run)
    result.add("lines that started a program / wrote", f"{tally.started_programs} / {tally.wrote}")
    result.add("lines bash refused (status 2) / timed out", f"{tally.refused} / {tally.timed_out}")
    result.add("lines drawn again (not run twice)", tally.repeated)
    result.add("disagreements", len(tally.disagreeing), at_most=0)
    if not quick:
        result.add("causes (minimised lines that explain them)", len(causes.found))
    kinds = Counter(d.kind for v in tally.disagreeing for d in v.disagreements)
    result.details = {
        "seed": seed,
        "cases": tally.cases,
        "run": tally.run,
        "seconds": rounded(seconds),
        "risks": dict(risks),
        "started_programs": tally.started_programs,
        "wrote": tally.wrote,
        "refused": tally.refused,
        "timed_out": tally.timed_out,
        "repeated": tally.repeated,
        "disagreement_kinds": dict(kinds),
        "causes": [{"line": c.line, "explains": c.explains, "report": c.report} for c in causes.found],
        "unexplained": explained.count(None),
        "disagreements": listed,
        "launches": probe.launches,
    }
    return result


def _draw(checker: Checker, tally: Tally, seed: int, lines: int) -> None:
    """Hypothesis runs of EXAMPLES_PER_SEED batches each, from seed, seed + 1, ..., until `lines` are drawn
    (a line drawn again is not run twice: a few fewer cases run)."""
    pipeline = Pipeline(checker, tally)
    offset = 0
    start = time.perf_counter()
    while (drawn := tally.cases + tally.repeated) < lines:
        examples = min(EXAMPLES_PER_SEED, -(-(lines - drawn) // BATCH))
        for_each_batch(seed + offset, examples, BATCH, pipeline.feed)
        pipeline.finish()
        offset += 1
        if offset % 5 == 0:
            seconds = time.perf_counter() - start
            print(
                f"  fuzz-shell: {tally.cases:,} cases in {seconds:.0f} s, {len(tally.disagreeing)} disagreeing",
                file=sys.stderr,
                flush=True,
            )


def _entry(verdict: Verdict, cause: str | None) -> dict[str, Any]:
    run = verdict.run
    return {
        "command": verdict.command,
        "classifier": verdict.classification.risk.name,
        "programs": list(verdict.classification.programs),
        "bash_started": [shlex.join(s.words) + ("" if s.found else " (not found)") for s in run.started][:20],
        "bash_wrote": list(run.writes),
        "disagreements": [str(d) for d in verdict.disagreements],
        "cause": cause,
    }


def _listed(verdicts: list[Verdict], causes: list[str | None]) -> list[dict[str, Any]]:
    """Up to LISTED disagreements: those no cause explains, then the first of each cause, then the rest."""
    order = sorted(range(len(verdicts)), key=lambda i: (causes[i] is not None, causes.index(causes[i]) != i, i))
    return [_entry(verdicts[i], causes[i]) for i in order[:LISTED]]


@dataclass
class _Cause:
    line: str  # a minimised command line
    report: str
    shape: str  # the line with the program of its disagreement taken out
    explains: int = 0


class _Causes:
    """Minimised lines that explain the disagreements: one explains another disagreement whose line holds
    its other words when, with that one's program in place of its own, it disagrees too (`! ! cp` explains
    `… ! ! wc …`). A disagreement no cause explains is minimised into a new cause, at most `minimise`
    times."""

    def __init__(self, checker: Checker, *, minimise: int) -> None:
        self.checker = checker
        self.minimise = minimise
        self.found: list[_Cause] = []
        self._disagrees: dict[str, bool] = {}

    def explain(self, verdict: Verdict) -> str | None:
        program = _program(verdict)
        for cause in self.found:
            if not program or not _holds_the_rest(verdict.command, cause.shape):
                continue
            if self._disagrees_alone(cause.shape.replace(_HOLE, program)):
                cause.explains += 1
                return cause.line
        if len(self.found) >= self.minimise:
            return None
        smaller = self.checker.minimise(verdict, budget=150)
        shape = smaller.command.replace(program, _HOLE) if program else smaller.command
        self.found.append(_Cause(smaller.command, smaller.report(), shape, explains=1))
        return smaller.command

    def _disagrees_alone(self, line: str) -> bool:
        if line not in self._disagrees:
            self._disagrees[line] = bool(self.checker.check(line).disagreements)
        return self._disagrees[line]


_HOLE = "\0program\0"


def _holds_the_rest(command: str, shape: str) -> bool:
    """Whether every word of a cause but its program is in the command (`command ls -v` can explain
    `… command du -v …`, not any line whose program is unlisted)."""
    return all(word in command for word in shape.split() if _HOLE not in word)


def _program(verdict: Verdict) -> str:
    """The program of the first disagreement (none for a write)."""
    first = verdict.disagreements[0]
    if first.kind == UNLISTED:
        return first.detail
    if first.kind == UNSAFE_ARGV:
        return first.detail.split(" ", 1)[0]
    return ""
