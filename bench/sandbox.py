"""10. Sandbox start overhead: what bubblewrap adds to starting one command.

`bash -c true` run bare and run under the sandbox's real options (paicli/sandbox/bwrap.py, for a
throw-away workspace and home: every namespace, the mounts, `--as-pid-1`), the two alternating, each
run a fresh process as execute_command starts it (a new session, stdin from /dev/null, output piped).
p50 and p99 of each, and the overhead: the difference of the p50s (target ≤ 15 ms) and of the p99s.
Where bubblewrap does not work the benchmark says why instead of timing.

Then the walks paicli does around every sandboxed command besides starting it, on a generated workspace
of 20,000 files in 2,000 folders (a git repository) and a home folder of the same shape: the git-controlled
paths before the command (which its mounts use) and after it (paicli/sandbox/gitdirs.py), the socket files
outside the hidden folders (sockets.py, which also looks at /var/lib, /var/tmp, /opt, ... of this
machine), and the git-ignored check of a command that copies onto files (`cp a b c d`, one
`git check-ignore` for all). Each first cold (nothing remembered), then p50 of the next commands with
nothing changed (folder listings reused: sandbox/folders.py; target ≤ 50 ms for the git walks and the
socket scan together), and once more after a command made a folder deep in the tree.

Last, a sandboxed command in a workspace holding 0, 50 and 200 nested git repositories (one read-only
mount each: bubblewrap's set-up grows with the square of its mounts; no target, a known cost).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.common import Result, median, percentile, rounded
from paicli.policy.classify import classify_command
from paicli.sandbox import Containment, choose_sandbox
from paicli.sandbox.bwrap import git_mounts
from paicli.sandbox.folders import RACY_NS
from paicli.sandbox.gitdirs import git_state, walk_folders
from paicli.sandbox.sockets import find_sockets, scan_folders
from paicli.tools.base import ToolContext
from paicli.tools.builtin.execute_command import ExecuteCommand, ExecuteCommandArgs

NAME = "sandbox"
TITLE = "Sandbox start overhead per command"
TARGET_MS = 15.0
WALK_TARGET_MS = 50.0
TREE_FILES = 20_000
TREE_FOLDERS = (20, 10, 10)  # 2,000 folders of 10 files
NESTED = (0, 50, 200)  # nested git repositories (a folder of clones)


def _once(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        argv,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        check=True,
    )
    return (time.perf_counter() - start) * 1000


def run(quick: bool = False) -> Result:
    rounds = 10 if quick else 300
    result = Result(NAME, TITLE, details={"rounds": rounds})
    with tempfile.TemporaryDirectory(prefix="paicli-bench-sandbox-") as folder:
        workspace, home = Path(folder, "ws"), Path(folder, "home")
        workspace.mkdir()
        home.mkdir()
        choice = choose_sandbox("auto", workspace=workspace, home=home)
        if choice.sandbox is None:
            result.add("bubblewrap", f"not measured: {choice.problem}")
            return result
        env = dict(os.environ)
        bare = ["bash", "-c", "true"]
        contained, contained_env = choice.sandbox.command(bare, env, Containment(workspace))
        _once(bare, env), _once(contained, contained_env)  # warm the page cache
        bare_ms, contained_ms = [], []
        for _ in range(rounds):
            bare_ms.append(_once(bare, env))
            contained_ms.append(_once(contained, contained_env))
    p50 = percentile(contained_ms, 50) - percentile(bare_ms, 50)
    p99 = percentile(contained_ms, 99) - percentile(bare_ms, 99)
    result.add("bare bash -c true p50", rounded(percentile(bare_ms, 50), 3), "ms")
    result.add("bare bash -c true p99", rounded(percentile(bare_ms, 99), 3), "ms")
    result.add("in bubblewrap p50", rounded(percentile(contained_ms, 50), 3), "ms")
    result.add("in bubblewrap p99", rounded(percentile(contained_ms, 99), 3), "ms")
    result.add("overhead p50 (beyond bare)", rounded(p50, 3), "ms", at_most=TARGET_MS)
    result.add("overhead p99 (beyond bare)", rounded(p99, 3), "ms")
    result.details.update(bare_ms=[rounded(v, 3) for v in bare_ms], contained_ms=[rounded(v, 3) for v in contained_ms])
    walks(result, 5, folders=(2, 2, 2), wait=False) if quick else walks(result, 50)
    nested(result, (0, 5), rounds=2, wait=False) if quick else nested(result, NESTED, rounds=5)
    return result


def nested(result: Result, counts: tuple[int, ...], rounds: int, *, wait: bool = True) -> None:
    """A sandboxed `true` through execute_command in a workspace holding N nested git repositories (a folder
    of clones): each one's git folder is a read-only mount of its own, and bubblewrap sets its mounts up
    one after another, each looking through the mount table so far. Median of `rounds`."""
    for count in counts:
        with tempfile.TemporaryDirectory(prefix="paicli-bench-nested-") as folder:
            workspace, home = Path(folder, "ws"), Path(folder, "home")
            home.mkdir()
            subprocess.run(["git", "init", "-q", str(workspace)], check=True)
            for number in range(count):
                subprocess.run(["git", "init", "-q", str(workspace / f"repo{number:03d}")], check=True)
            if wait:  # configs changed within RACY_NS are read again each time (sandbox/folders.py)
                time.sleep(RACY_NS / 1e9 + 0.2)
            choice = choose_sandbox("auto", workspace=workspace, home=home)
            if choice.sandbox is None:
                result.add("nested repositories", f"not measured: {choice.problem}")
                return
            times = _command_ms(ToolContext(workspace=workspace, sandbox=choice.sandbox), rounds + 1)
        result.add(f"a sandboxed command, {count} nested repositories, median", rounded(median(times[1:]), 3), "ms")


def _tree(root: Path, folders: tuple[int, int, int]) -> None:
    """Ten small files in each folder of a tree of `folders` (TREE_FOLDERS: 20 × 10 × 10, TREE_FILES)."""
    outer, middle, inner = folders
    files = TREE_FILES // (20 * 10 * 10)
    for a in range(outer):
        for b in range(middle):
            for c in range(inner):
                folder = root / f"pkg{a}" / f"mod{b}" / f"part{c}"
                folder.mkdir(parents=True)
                for n in range(files):
                    (folder / f"f{n}.py").write_bytes(b"x = 1\n")


def _command_ms(context: ToolContext, rounds: int) -> list[float]:
    """The wall time of `true` run through execute_command, `rounds` times."""
    arguments = ExecuteCommandArgs(command="true")
    return [_ms(lambda: asyncio.run(ExecuteCommand().run(arguments, context))) for _ in range(rounds)]


def _ms(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return (time.perf_counter() - start) * 1000


def _cpu_ms(work: Callable[[], object]) -> float:
    """The CPU time (user and system) the work took: on a busy machine, less noisy than the wall clock."""
    start = time.process_time()
    work()
    return (time.process_time() - start) * 1000


def _lstat_us(rounds: int = 2000) -> list[float]:
    """What one `lstat` costs here: the walks do one per folder, so their time scales with it."""
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        os.lstat("/tmp")
        times.append((time.perf_counter() - start) * 1e6)
    return times


def walks(result: Result, rounds: int, folders: tuple[int, int, int] = TREE_FOLDERS, *, wait: bool = True) -> None:
    """The walks around each sandboxed command (see the module docstring)."""
    with tempfile.TemporaryDirectory(prefix="paicli-bench-walks-") as folder:
        workspace, home = Path(folder, "ws"), Path(folder, "home")
        _tree(workspace, folders)
        _tree(home, folders)
        subprocess.run(["git", "init", "-q", str(workspace)], check=True)
        (workspace / ".gitignore").write_text("*.log\n")
        for name in ("a.log", "b.log", "c.log"):
            (workspace / name).write_text("old\n")
        if wait:  # folders changed within RACY_NS are never remembered (--quick: the figures mean little)
            time.sleep(RACY_NS / 1e9 + 0.2)
        git_folders, socket_folders = walk_folders(), scan_folders()
        skip = (Path("/tmp"), Path("/run"), Path("/var/run"))

        def git_walks() -> None:  # as execute_command does: before (its paths serve the mounts), after
            before = git_state(workspace, folders=git_folders)
            git_mounts(workspace, None, before.found)
            git_state(workspace, folders=git_folders)

        def sockets() -> None:
            find_sockets(home, skip=skip, folders=socket_folders)

        def uncached() -> None:  # three walks, nothing remembered: what each command cost before the cache
            for _ in range(3):
                git_state(workspace, folders=walk_folders())

        cold_git, cold_sockets = _ms(git_walks), _ms(sockets)
        before_ms = [_ms(uncached) for _ in range(max(3, rounds // 5))]
        git_ms = [_ms(git_walks) for _ in range(rounds)]
        git_cpu = [_cpu_ms(git_walks) for _ in range(rounds)]
        socket_ms = [_ms(sockets) for _ in range(rounds)]
        socket_cpu = [_cpu_ms(sockets) for _ in range(rounds)]
        (workspace / f"pkg{folders[0] - 1}" / f"mod{folders[1] - 1}" / f"part{folders[2] - 1}" / "new").mkdir()
        changed = _ms(git_walks)
        copy = "tee a.log b.log c.log < new.txt"
        check_ms = [_ms(lambda: classify_command(copy, workspace)) for _ in range(rounds)]
        plain_ms = [_ms(lambda: classify_command("cp new.txt pkg1/", workspace)) for _ in range(rounds)]
    both = percentile(git_ms, 50) + percentile(socket_ms, 50)
    result.add("one lstat of a folder on this machine, p50", rounded(percentile(_lstat_us(), 50), 3), "µs")
    files = 10 * folders[0] * folders[1] * folders[2]
    result.add(f"git walks per command, {files:,} files: first (cold)", rounded(cold_git, 3), "ms")
    result.add("git walks per command, nothing remembered (before), p50", rounded(percentile(before_ms, 50), 3), "ms")
    result.add("git walks per command: next, nothing changed, p50", rounded(percentile(git_ms, 50), 3), "ms")
    result.add("git walks per command: next, CPU p50", rounded(percentile(git_cpu, 50), 3), "ms")
    result.add("git walks per command: after a new folder deep in the tree", rounded(changed, 3), "ms")
    result.add(f"socket scan before a command, {files:,}-file home: first", rounded(cold_sockets, 3), "ms")
    result.add("socket scan before a command: next, p50", rounded(percentile(socket_ms, 50), 3), "ms")
    result.add("socket scan before a command: next, CPU p50", rounded(percentile(socket_cpu, 50), 3), "ms")
    result.add("walks and socket scan per command, p50", rounded(both, 3), "ms", at_most=WALK_TARGET_MS)
    result.add(
        "classifying `tee` onto 3 ignored files (git check-ignore), p50", rounded(percentile(check_ms, 50), 3), "ms"
    )
    result.add("classifying `cp` into a folder, nothing to check, p50", rounded(percentile(plain_ms, 50), 3), "ms")
    result.details.update(git_walk_ms=[rounded(v, 3) for v in git_ms], socket_ms=[rounded(v, 3) for v in socket_ms])
