"""9. Checkpoints: the first checkpoint of a 5,000-file, 50 MB workspace, the next ones after a change of a
few files, a whole step as a turn takes it, and the undo of a 20-file plan.

The engine runs in this process against real git and real files in a temporary folder (the workspace
has a `.gitignore`, as most do). "first" is `ensure()` (the shadow repository is created) plus the first
snapshot, which stores every file (five times, each into a new store). "next" changes three files, then
snapshots. "step" is what a turn costs beyond its own work: the checkpoint before, three tool writes recorded
(each keeps what the file held), the checkpoint after, the window, the line counts and the journal.
"undo" is `paicli undo` of a plan whose two tasks wrote 20 files (10 created, 10 changed), without the
process start: lock, journal, preview (what each file holds now, stored), line counts, the writes (temp
file, fsync, rename, folder fsync) and the journal saved twice; a redo puts the files back each round.
"""

from __future__ import annotations

import functools
import os
import random
import resource
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.common import Result, median, percentile, rounded
from paicli.app.checkpoints.command import UndoAnswer, undo_answer
from paicli.app.checkpoints.journal import Entry
from paicli.app.checkpoints.recording import Recording
from paicli.app.checkpoints.store import CheckpointStore

NAME = "checkpoints"
TITLE = "Checkpoints and undo"


def make_workspace(root: Path, files: int, total_bytes: int, rng: random.Random) -> list[str]:
    size = total_bytes // files
    words = [f"word{n}" for n in range(500)]
    names = []
    for n in range(files):
        name = f"pkg{n % 100:02d}/sub{n % 7}/module_{n}.py"
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        line_count = max(1, size // 40)
        text = "\n".join(" ".join(rng.choices(words, k=6)) for _ in range(line_count)) + "\n"
        path.write_text(text[:size] if len(text) > size else text)
        names.append(name)
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    return names


def cpu_seconds() -> float:
    """CPU time of this process (all threads) and of its finished children (git)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(work: Callable[[], object], cpu: list[float] | None = None) -> float:
    """Wall seconds of `work()`; its CPU seconds (paicli and git together) appended to `cpu`."""
    used, start = cpu_seconds(), time.perf_counter()
    work()
    wall = time.perf_counter() - start
    if cpu is not None:
        cpu.append(cpu_seconds() - used)
    return wall


def first_checkpoint(store: CheckpointStore) -> None:
    with store.lock.held():
        store.ensure()
        store.snapshot("first")


def expect_done(answer: UndoAnswer) -> None:
    assert answer.code == 0, answer.err


def run(quick: bool = False) -> Result:
    files, total, rounds, firsts = (200, 2_000_000, 3, 1) if quick else (5_000, 50_000_000, 30, 5)
    rng = random.Random(7)
    git = shutil.which("git")
    result = Result(NAME, TITLE, details={"files": files, "bytes": total, "rounds": rounds, "firsts": firsts})
    if git is None:
        result.add("git", "not installed")
        return result
    with tempfile.TemporaryDirectory() as folder:
        workspace, home = Path(folder) / "ws", Path(folder) / "home"
        workspace.mkdir()
        names = make_workspace(workspace, files, total, rng)
        first_s: list[float] = []
        first_cpu: list[float] = []
        for n in range(firsts):  # each into a new store: a first checkpoint every time
            store = CheckpointStore(git, workspace, home / f"cp{n}", notify=lambda message: None)

            first_s.append(timed(functools.partial(first_checkpoint, store), first_cpu))

        def change_and_snapshot() -> float:
            for name in rng.sample(names, 3):
                with (workspace / name).open("a") as handle:
                    handle.write(f"# changed {rng.random()}\n")
            return timed(lambda: store.snapshot("next"))

        next_s = [change_and_snapshot() for _ in range(rounds)]

        def step(n: int) -> float:
            recording = Recording(store, Entry(id=f"turn-bench-{n}", kind="turn", label="bench"))
            chosen = rng.sample(names, 3)

            def work() -> None:
                recording.start()
                recording.begin_step(None)
                for name in chosen:
                    recording.note_write(None, name)
                    (workspace / name).write_text(f"rewritten {rng.random()}\n")
                recording.finish()

            return timed(work)

        step_s = [step(n) for n in range(rounds)]

        plan = Recording(store, Entry(id="plan-bench", kind="plan", label="twenty files"))
        plan.start()
        for task, chosen in (("task_1", names[:10]), ("task_2", [f"new/file_{n}.py" for n in range(10)])):
            plan.begin_step(task)
            for name in chosen:
                plan.note_write(task, name)
                (workspace / name).parent.mkdir(parents=True, exist_ok=True)
                (workspace / name).write_text(f"written by {task}\n" * 20)
            plan.end_step(task)
        plan.finish()
        undo_s: list[float] = []
        redo_s: list[float] = []
        undo_cpu: list[float] = []
        for _ in range(rounds):
            undo_s.append(timed(lambda: expect_done(undo_answer(store, "plan-bench")), undo_cpu))
            redo_s.append(timed(lambda: expect_done(undo_answer(store, None, redo=True))))

    result.add("first checkpoint: p50", median(first_s), "s", at_most=2.0)
    result.add("first checkpoint: CPU p50 (paicli + git)", median(first_cpu), "s")
    result.add("next checkpoint (3 files changed): p50", median(next_s) * 1000, "ms", at_most=150.0)
    result.add("next checkpoint: p90", percentile(next_s, 90) * 1000, "ms")
    result.add("a turn's step (3 tool writes): p50", median(step_s) * 1000, "ms")
    result.add("undo of a 20-file plan: p50", median(undo_s) * 1000, "ms", at_most=300.0)
    result.add("undo: CPU p50 (paicli + git)", median(undo_cpu) * 1000, "ms")
    result.add("redo of it: p50", median(redo_s) * 1000, "ms")
    result.details["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    result.details.update(
        first_s=[rounded(s) for s in first_s],
        first_cpu_s=[rounded(s) for s in first_cpu],
        next_ms=[rounded(s * 1000) for s in next_s],
        step_ms=[rounded(s * 1000) for s in step_s],
        undo_ms=[rounded(s * 1000) for s in undo_s],
        undo_cpu_ms=[rounded(s * 1000) for s in undo_cpu],
        redo_ms=[rounded(s * 1000) for s in redo_s],
    )
    return result
