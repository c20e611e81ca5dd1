"""The classifier against bash, fuzzed (issue 27): the differential test of
tests/security/test_bash_agreement.py with a fresh seed and many more cases.

Command lines drawn from the grammar of bash in tests/security/bashgrammar.py are classified and run by the
real bash in the sandboxed probe (tests/security/bashprobe.py), where every program is a logging stand-in
and every write is seen. A disagreement: a SAFE or ASK line that started a program its classification
does not list, a SAFE line that wrote something, or a SAFE line that started a program whose real argv is
not SAFE on its own (target 0). Reported: the seed (random, printed, recorded; `PAICLI_FUZZ_SEED` picks
one), the cases run (20,000 lines drawn, or `PAICLI_FUZZ_CASES`; 160 with --quick; a line drawn again
runs once), cases per second, the verdicts, how many lines started a program or wrote, and the
disagreements: up to 50 in the JSON details, up to 10 of them minimised, each one that no line minimised
before explains (not with --quick). Where bubblewrap cannot run, the benchmark says why instead.
"""

from __future__ import annotations

import os
import random
import shlex
import sys
import tempfile
import time
from collections import Counter
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
        listed = [_entry(v) for v in tally.disagreeing[:LISTED]]
        if not quick:  # minimising costs up to 150 runs each
            _minimise_the_unexplained(checker, tally.disagreeing[:LISTED], listed)
    risks = tally.risks
    result.add("seed", str(seed))
    result.add("cases run", tally.cases)
    result.add("cases per second", rounded(tally.cases / seconds))
    result.add("SAFE / ASK / OPAQUE / DENY", f"{risks['SAFE']} / {risks['ASK']} / {risks['OPAQUE']} / {risks['DENY']}")
    result.add("lines that started a program / wrote", f"{tally.started_programs} / {tally.wrote}")
    result.add("lines bash refused (status 2) / timed out", f"{tally.refused} / {tally.timed_out}")
    result.add("lines drawn again (not run twice)", tally.repeated)
    result.add("disagreements", len(tally.disagreeing), at_most=0)
    kinds = Counter(d.kind for v in tally.disagreeing for d in v.disagreements)
    result.details = {
        "seed": seed, "cases": tally.cases, "seconds": rounded(seconds), "risks": dict(risks),
        "started_programs": tally.started_programs, "wrote": tally.wrote, "refused": tally.refused,
        "timed_out": tally.timed_out, "repeated": tally.repeated, "disagreement_kinds": dict(kinds),
        "disagreements": listed, "launches": probe.launches,
    }  # fmt: skip
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
            print(f"  fuzz-shell: {tally.cases:,} cases in {seconds:.0f} s, {len(tally.disagreeing)} disagreeing",
                  file=sys.stderr, flush=True)  # fmt: skip


def _entry(verdict: Verdict) -> dict[str, Any]:
    run = verdict.run
    return {
        "command": verdict.command,
        "classifier": verdict.classification.risk.name,
        "programs": list(verdict.classification.programs),
        "bash_started": [shlex.join(s.words) + ("" if s.found else " (not found)") for s in run.started][:20],
        "bash_wrote": list(run.writes),
        "disagreements": [str(d) for d in verdict.disagreements],
    }


def _minimise_the_unexplained(checker: Checker, verdicts: list[Verdict], listed: list[dict[str, Any]]) -> None:
    """Minimises disagreements one after another (at most MINIMISED), skipping one that a line already
    minimised explains: that line with this disagreement's program in place of its own disagrees too
    (`! ! cp` explains `… ! ! wc …`). So the list shows different causes, not the commonest ten times."""
    shapes: list[str] = []
    for verdict, entry in zip(verdicts, listed, strict=True):
        if len(shapes) >= MINIMISED:
            return
        program = _program(verdict)
        tried = (shape.replace(_HOLE, program) for shape in shapes if program)
        explaining = next((line for line in tried if checker.check(line).disagreements), None)
        if explaining is not None:
            entry["explained_by"] = explaining
            continue
        smaller = checker.minimise(verdict, budget=150)
        entry["minimised"] = smaller.command
        entry["minimised_report"] = smaller.report()
        shapes.append(smaller.command.replace(program, _HOLE) if program else smaller.command)


_HOLE = "\0program\0"


def _program(verdict: Verdict) -> str:
    """The program of the first disagreement (none for a write)."""
    first = verdict.disagreements[0]
    if first.kind == UNLISTED:
        return first.detail
    if first.kind == UNSAFE_ARGV:
        return first.detail.split(" ", 1)[0]
    return ""
