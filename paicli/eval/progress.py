"""How `eval run` shows its progress: a rich progress bar on stderr (done/total, passes, the runs in
flight), or, with `--json`, one JSON object per line on stdout (`eval_started`, `eval_run_started`,
`eval_run_finished` with the record, `eval_finished`)."""

from __future__ import annotations

import json
import sys
import time
from typing import Any, TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from paicli.common.sanitize import terminal_safe
from paicli.eval.matrix import PlannedRun
from paicli.eval.records import RunRecord


class JsonProgress:
    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stdout

    def _write(self, event: str, **fields: Any) -> None:
        self.stream.write(json.dumps({"event": event, "ts": time.time(), **fields}) + "\n")
        self.stream.flush()

    def begin(self, total: int, skipped: int) -> None:
        self._write("eval_started", total=total, skipped=skipped)

    def started(self, run: PlannedRun) -> None:
        self._write("eval_run_started", **run.key.model_dump())

    def finished(self, run: PlannedRun, record: RunRecord) -> None:
        self._write("eval_run_finished", record=record.model_dump(mode="json"))

    def end(self, done: int, passed: int, cancelled: bool) -> None:
        self._write("eval_finished", done=done, passed=passed, cancelled=cancelled)


class RichProgress:
    """A bar with done/total and the pass count, and the runs in flight under it."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.bar = Progress(
            TextColumn("[bold]eval"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[passed]} passed"),
            TimeElapsedColumn(),
            TextColumn("{task.fields[running]}"),
            console=self.console,
        )
        self.task = self.bar.add_task("eval", total=0, passed=0, running="")
        self.running: dict[int, str] = {}
        self.passed = 0

    def begin(self, total: int, skipped: int) -> None:
        if skipped:
            self.console.print(f"paicli eval: {skipped} run{'s' if skipped != 1 else ''} already recorded, skipped")
        self.bar.update(self.task, total=total)
        self.bar.start()

    def _show(self) -> None:
        names = list(self.running.values())
        running = ", ".join(names[:4]) + (f" +{len(names) - 4}" if len(names) > 4 else "")
        self.bar.update(self.task, passed=self.passed, running=terminal_safe(running))

    def started(self, run: PlannedRun) -> None:
        self.running[run.index] = run.label
        self._show()

    def finished(self, run: PlannedRun, record: RunRecord) -> None:
        self.running.pop(run.index, None)
        self.passed += record.outcome == "pass"
        self.bar.advance(self.task)
        self._show()
        if record.outcome != "pass":
            why = f": {record.error}" if record.error else ""
            self.bar.console.print(terminal_safe(f"{run.label}: {record.outcome}{why}"), markup=False)

    def end(self, done: int, passed: int, cancelled: bool) -> None:
        self.bar.stop()
        state = "cancelled" if cancelled else "done"
        self.console.print(f"paicli eval {state}: {done} run{'s' if done != 1 else ''} finished, {passed} passed")
