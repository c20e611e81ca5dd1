"""Does the classifier read a command line as bash does? One case: classify it, run it in the probe
(tests/security/bashprobe.py), compare.

- SAFE and ASK: every program bash started (by the name the classifier uses) is in the classification's
  `programs`. The programs a sourced template file starts (`source payload` runs `touch`) are left out
  when `source` or `.` is listed: the classifier cannot read files, it says that the line runs one.
- SAFE: bash wrote nothing anywhere, and every program it started is SAFE when its real argv, as the
  stand-in logged it, is classified on its own in the same workspace (from the folder it ran in).
- OPAQUE and DENY: the classifier fails closed; nothing to compare.

A disagreement is minimised by deleting what can be deleted while the same disagreement remains.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from paicli.policy.classify import classify_command
from paicli.policy.risk import Classification, Risk
from tests.security.bashprobe import SOURCED_PROGRAMS, BashProbe, Run, Started

UNLISTED = "started a program the classification does not list"
WROTE = "wrote although SAFE"
UNSAFE_ARGV = "started a program whose real argv is not SAFE on its own"
_FD_PATH = "/dev/fd/"
_TOKEN = re.compile(r"\s+|[;&|()<>]+|[^\s;&|()<>]+")
MINIMISING_TIMEOUT = 1.0
COMPARED = (Risk.SAFE, Risk.ASK)  # OPAQUE and DENY: the classifier fails closed


@dataclass(frozen=True)
class Disagreement:
    kind: str  # UNLISTED, WROTE, UNSAFE_ARGV
    detail: str  # the program, or what was written, or the argv

    def __str__(self) -> str:
        return f"{self.kind}: {self.detail}"


@dataclass(frozen=True)
class Verdict:
    command: str
    classification: Classification
    run: Run
    disagreements: tuple[Disagreement, ...]

    def report(self) -> str:
        """What bash did and what the classifier said, for a failure message or a report."""
        started = "; ".join(shlex.join(s.words) + ("" if s.found else " (not found)") for s in self.run.started)
        return (
            f"command: {self.command!r}\n"
            f"  classifier: {self.classification.risk.name}, programs {list(self.classification.programs)}"
            f"{', ' + self.classification.reason if self.classification.reason else ''}\n"
            f"  bash started: {started or 'nothing'}\n"
            f"  bash wrote: {', '.join(self.run.writes) or 'nothing'}\n"
            + "".join(f"  disagreement: {d}\n" for d in self.disagreements)
        )


@dataclass
class Tally:
    """What a run of many cases saw."""

    cases: int = 0
    risks: Counter[str] = field(default_factory=Counter)
    not_run: int = 0  # OPAQUE and DENY lines: the classifier fails closed, nothing to compare
    started_programs: int = 0  # cases in which bash started at least one program
    wrote: int = 0  # cases in which bash wrote something
    refused: int = 0  # cases bash rejected (status 2, syntax errors among them)
    timed_out: int = 0
    repeated: int = 0  # lines drawn again, not run twice
    disagreeing: list[Verdict] = field(default_factory=list)

    @property
    def run(self) -> int:
        return self.cases - self.not_run

    def add(self, verdict: Verdict) -> None:
        self.cases += 1
        self.risks[verdict.classification.risk.name] += 1
        self.started_programs += bool(verdict.run.started)
        self.wrote += bool(verdict.run.writes)
        self.refused += verdict.run.status == 2
        self.timed_out += verdict.run.timed_out
        if verdict.disagreements:
            self.disagreeing.append(verdict)

    def skip(self, found: Classification) -> None:
        self.cases += 1
        self.risks[found.risk.name] += 1
        self.not_run += 1


class Pipeline:
    """Checks batches of lines with the sandbox always busy: a batch is classified (while the sandbox runs
    the previous one), its SAFE and ASK lines are handed over, then the previous batch's runs are
    collected, so the next batch is drawn while this one runs. OPAQUE and DENY lines are counted, not run
    (the classifier fails closed: nothing to compare). A line seen before is skipped (Hypothesis draws
    some twice). `finish` collects the last batch."""

    def __init__(self, checker: Checker, tally: Tally) -> None:
        self.checker = checker
        self.tally = tally
        self._seen: set[str] = set()
        self._pending: list[tuple[str, Classification]] = []

    def feed(self, commands: list[str]) -> None:
        fresh = [c for c in dict.fromkeys(commands) if c not in self._seen]
        self.tally.repeated += len(commands) - len(fresh)
        self._seen.update(fresh)
        runnable = []
        for command in fresh:
            found = self.checker.classify(command)
            if found.risk in COMPARED:
                runnable.append((command, found))
            else:
                self.tally.skip(found)
        if runnable:
            self.checker.probe.submit([command for command, _ in runnable])
        self.finish()
        self._pending = runnable

    def finish(self) -> None:
        pending, self._pending = self._pending, []
        if pending:
            commands = [command for command, _ in pending]
            found = [classification for _, classification in pending]
            for verdict in self.checker._verdicts(commands, found, self.checker.probe.collect()):
                self.tally.add(verdict)


class Checker:
    def __init__(self, probe: BashProbe) -> None:
        self.probe = probe
        self._alone: dict[str, Risk] = {}

    def classify(self, command: str) -> Classification:
        return classify_command(command, self.probe.workspace, search_path=self.probe.search_path)

    def check(self, command: str, *, timeout: float | None = None) -> Verdict:
        return self.check_many([command], timeout=timeout)[0]

    def check_many(self, commands: list[str], *, timeout: float | None = None) -> list[Verdict]:
        """The commands run in the sandbox while they are classified here."""
        self.probe.submit(commands, timeout=timeout)
        found = [self.classify(command) for command in commands]
        return self._verdicts(commands, found, self.probe.collect())

    def _verdicts(self, commands: list[str], found: list[Classification], runs: list[Run]) -> list[Verdict]:
        return [Verdict(c, f, r, tuple(self.compare(f, r))) for c, f, r in zip(commands, found, runs, strict=True)]

    def compare(self, found: Classification, run: Run) -> list[Disagreement]:
        if found.risk not in COMPARED:
            return []
        listed = set(found.programs)
        if listed & {"source", "."}:
            listed |= SOURCED_PROGRAMS
        disagreements = [Disagreement(UNLISTED, name) for name in run.names if name not in listed]
        if found.risk is Risk.SAFE:
            disagreements += [Disagreement(WROTE, written) for written in run.writes]
            for started in run.started:
                alone = self.alone(started)
                if self._risk(alone) is not Risk.SAFE:
                    disagreements.append(Disagreement(UNSAFE_ARGV, f"{alone} ({self._risk(alone).name})"))
        return list(dict.fromkeys(disagreements))

    def alone(self, started: Started) -> str:
        """The program's real argv as a command line, run from the folder it ran in; a process
        substitution's `/dev/fd/N` read as `/dev/null` (a pipe of the line's own, not a file)."""
        words = [
            w if not (w.startswith(_FD_PATH) and w[len(_FD_PATH) :].isdigit()) else "/dev/null" for w in started.words
        ]
        line = shlex.join(words)
        workspace = str(self.probe.workspace)
        if started.cwd and started.cwd != workspace:
            inside = started.cwd.startswith(workspace + "/")
            folder = os.path.relpath(started.cwd, workspace) if inside else started.cwd
            line = f"cd {shlex.quote(folder)} && {line}"
        return line

    def _risk(self, line: str) -> Risk:
        if line not in self._alone:
            self._alone[line] = self.classify(line).risk
        return self._alone[line]

    # ---- minimising ----

    def minimise(self, verdict: Verdict, *, budget: int = 300) -> Verdict:
        """A shorter command line with the same (first) disagreement: lines, then tokens, then ever smaller
        runs of characters deleted while it remains, within `budget` runs of the probe (each with a
        short time limit: a deletion can make a loop endless)."""
        target = verdict.disagreements[0]
        tries = 0

        def keeps(command: str) -> Verdict | None:
            nonlocal tries
            if self.classify(command).risk not in COMPARED:
                return None  # fails closed: no disagreement to keep, no need to run it
            tries += 1
            candidate = self.check(command, timeout=MINIMISING_TIMEOUT)
            return candidate if _same(target, candidate.disagreements) else None

        def allowed() -> bool:
            return tries < budget

        best, before = verdict, ""
        while best.command != before and allowed():  # until a whole round deletes nothing
            before = best.command
            best = _reduce(best, _lines, "\n", keeps, allowed)
            for width in (2, 1):
                best = _reduce(best, functools.partial(_tokens, width=width), "", keeps, allowed)
            size = max(len(best.command) // 2, 1)
            while size >= 1 and allowed():
                best = _reduce(best, functools.partial(_chunks, size=size), "", keeps, allowed)
                size //= 2
        return best


def _reduce(
    best: Verdict,
    split: Callable[[str], list[str]],
    glue: str,
    keeps: Callable[[str], Verdict | None],
    allowed: Callable[[], bool],
) -> Verdict:
    """Deletes each piece in turn (from the end), keeping every deletion that keeps the disagreement."""
    pieces = split(best.command)
    index = len(pieces) - 1
    while index >= 0 and len(pieces) > 1 and allowed():
        candidate = glue.join(pieces[:index] + pieces[index + 1 :])
        if candidate.strip() and (kept := keeps(candidate)) is not None:
            best = kept
            pieces = pieces[:index] + pieces[index + 1 :]
        index -= 1
    return best


def _lines(command: str) -> list[str]:
    return command.split("\n")


def _chunks(command: str, size: int) -> list[str]:
    return [command[i : i + size] for i in range(0, len(command), size)]


def _tokens(command: str, width: int) -> list[str]:
    """The command cut into words, blanks and operators, `width` of them to a piece."""
    tokens = _TOKEN.findall(command)
    return ["".join(tokens[i : i + width]) for i in range(0, len(tokens), width)]


def _same(target: Disagreement, found: tuple[Disagreement, ...]) -> bool:
    if target.kind == UNSAFE_ARGV:  # the argv shrinks with the line: the same program is enough
        name = target.detail.split(" ", 1)[0]
        return any(d.kind == UNSAFE_ARGV and d.detail.split(" ", 1)[0] == name for d in found)
    return target in found
