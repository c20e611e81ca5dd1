"""7. Startup: `paicli --version` and the REPL's time to its first prompt, beside `python -c pass`.

All three run in turn in every round (so a slow moment of the machine hits them alike); the table shows
medians. `--version` runs through the installed console script when there is one (what a user types),
else `python -m paicli`. The REPL runs in a pseudo-terminal (pexpect) with a key and a base URL set (the
fake server, which it does not call before the first message) and counts until "› " shows. CPU times
(user + system of the child) are less disturbed by other processes than wall times.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pexpect

from bench.common import REPO, Result, median, rounded
from tests.fakellm import FakeLLM

NAME = "startup"
TITLE = "Startup"
PROMPT = "› "


def version_command() -> list[str]:
    script = Path(sys.executable).with_name("paicli")
    return [str(script), "--version"] if script.exists() else [sys.executable, "-m", "paicli", "--version"]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed_process(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    cpu, start = _children_cpu(), time.perf_counter()
    subprocess.run(command, cwd=REPO, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start, _children_cpu() - cpu


def _timed_repl(env: dict[str, str], workspace: Path) -> tuple[float, float]:
    cpu, start = _children_cpu(), time.perf_counter()
    child = pexpect.spawn(
        sys.executable,
        ["-m", "paicli", "-C", str(workspace)],
        cwd=str(REPO),
        env=env,
        encoding="utf-8",
        codec_errors="replace",
        timeout=30,
        dimensions=(40, 120),
    )
    try:
        child.expect_exact(PROMPT)
        seconds = time.perf_counter() - start
        child.sendcontrol("d")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    return seconds, _children_cpu() - cpu  # CPU includes the way out: an upper bound


def run(quick: bool = False) -> Result:
    rounds = 1 if quick else 10
    with FakeLLM() as fake, tempfile.TemporaryDirectory() as folder:
        home, workspace = Path(folder) / "home", Path(folder) / "workspace"
        home.mkdir()
        workspace.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PAICLI_", "OPENAI_"))}
        env.update(
            HOME=str(home),
            TERM="xterm",
            LANG="C.UTF-8",
            PAICLI_API_KEY="bench-key-0000",
            PAICLI_BASE_URL=fake.base_url,
            PROMPT_TOOLKIT_NO_CPR="1",
        )
        probes: dict[str, Callable[[], tuple[float, float]]] = {
            "python -c pass": lambda: _timed_process([sys.executable, "-c", "pass"], env),
            "paicli --version": lambda: _timed_process(version_command(), env),
            "REPL to first prompt": lambda: _timed_repl(env, workspace),
        }
        for probe in probes.values():
            probe()  # warm the file cache once
        walls: dict[str, list[float]] = {name: [] for name in probes}
        cpus: dict[str, list[float]] = {name: [] for name in probes}
        for _ in range(rounds):
            for name, probe in probes.items():
                wall, cpu = probe()
                walls[name].append(wall)
                cpus[name].append(cpu)
    wall = {name: median(values) * 1000 for name, values in walls.items()}
    cpu = {name: median(values) * 1000 for name, values in cpus.items()}
    result = Result(NAME, TITLE, details={"rounds": rounds, "version_command": " ".join(version_command())})
    result.add("python -c pass: wall", wall["python -c pass"], "ms")
    result.add("paicli --version: wall", wall["paicli --version"], "ms", at_most=150.0)
    result.add("paicli --version: wall beyond python -c pass", wall["paicli --version"] - wall["python -c pass"], "ms")
    result.add("paicli --version: CPU", cpu["paicli --version"], "ms")
    result.add("REPL to first prompt: wall", wall["REPL to first prompt"], "ms")
    result.add(
        "REPL to first prompt: wall beyond python -c pass", wall["REPL to first prompt"] - wall["python -c pass"], "ms"
    )
    for name in probes:
        result.details[name] = {
            "wall_ms": [rounded(v * 1000) for v in walls[name]],
            "cpu_ms": [rounded(v * 1000) for v in cpus[name]],
        }
    return result
