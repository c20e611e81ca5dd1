"""7. Startup: `paicli --version` and the REPL's time to its first prompt, beside `python -c pass`; the
same with two MCP servers configured (the test server of tests/mcp, over stdio), and how long a typed
key takes to show while those servers start (issue 13: at most 20 ms more to the first prompt, and
typing stays responsive).

All three run in turn in every round (so a slow moment of the machine hits them alike); the table shows
medians. `--version` runs through the installed console script when there is one (what a user types),
else `python -m paicli`. The REPL runs in a pseudo-terminal (pexpect) with a key and a base URL set (the
fake server, which it does not call before the first message) and counts until "› " shows. CPU times
(user + system of the child) are less disturbed by other processes than wall times.

The children get a bytecode cache of their own (PYTHONPYCACHEPREFIX in the temporary folder, written by
the warm-up round) even where PYTHONDONTWRITEBYTECODE is set: an installed paicli has its `.pyc` files,
and compiling some 150 modules from source on every start (about 0.2 s here) is not what a user waits for.
Issue 16's target for the REPL is a ratio: at most 12 × `python -c pass` in the same run.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pexpect

from bench.common import REPO, Result, median, rounded
from bench.repl import PROMPT, repl_env, spawn_repl
from tests.fakellm import FakeLLM

NAME = "startup"
TITLE = "Startup"

KEYS = 20  # typed while the MCP servers start: about 1.5 s of typing
MCP_SERVER = REPO / "tests" / "mcp" / "server.py"
# What no first prompt can do without, and nothing else: the floor. The settings are a pydantic model, so one
# model is built and validated (`import pydantic` alone loads almost nothing of pydantic: it is lazy).
FLOOR = (
    "import argparse, asyncio, tomllib, prompt_toolkit.shortcuts\n"
    "from pydantic import BaseModel\n"
    "class Settings(BaseModel):\n"
    "    model: str\n"
    "Settings(model='m')\n"
)


def mcp_config(count: int = 2) -> str:
    return "".join(f'[mcp_servers.s{i}]\ncommand = "{sys.executable}"\nargs = ["{MCP_SERVER}"]\n' for i in range(count))


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


def _helper(what: str) -> str:
    """One measurement of bench/mcp_start.py in a fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.mcp_start", what],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return done.stdout.strip()


def drain(child: pexpect.spawn) -> None:
    """Reads what the terminal has written so far, so an expected key is not found in old output."""
    while True:
        try:
            child.read_nonblocking(1 << 16, timeout=0.02)
        except pexpect.TIMEOUT:
            return


def _timed_repl(
    env: dict[str, str], workspace: Path, echoes: list[float] | None = None, keys: int = KEYS
) -> tuple[float, float]:
    """Seconds to the first prompt. With `echoes`, then types `keys` keys one at a time, each after the
    last has shown, and appends how long each took to show (while MCP servers start)."""
    cpu, start = _children_cpu(), time.perf_counter()
    child = spawn_repl(workspace, env)
    try:
        child.expect_exact(PROMPT)
        seconds = time.perf_counter() - start
        if echoes is not None:
            for index in range(keys):
                key = "qzjvwxy"[index % 7]  # letters the toolbar (model, tokens, MCP status) never shows
                drain(child)
                sent = time.perf_counter()
                child.send(key)
                child.expect_exact(key)
                echoes.append(time.perf_counter() - sent)
                time.sleep(0.05)
            child.sendcontrol("u")
        child.sendcontrol("d")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    return seconds, _children_cpu() - cpu  # CPU includes the way out: an upper bound


def run(quick: bool = False) -> Result:
    rounds, keys = (1, 3) if quick else (10, KEYS)
    with FakeLLM() as fake, tempfile.TemporaryDirectory() as folder:
        home, workspace = Path(folder) / "home", Path(folder) / "workspace"
        home.mkdir()
        workspace.mkdir()
        mcp_home = Path(folder) / "mcp-home"
        (mcp_home / ".paicli").mkdir(parents=True)
        (mcp_home / ".paicli" / "config.toml").write_text(mcp_config())
        env = repl_env(home, fake.base_url)
        if not quick:  # timed with bytecode written once and used after; quick: no figure counts, no compiling
            env["PYTHONPYCACHEPREFIX"] = str(Path(folder) / "pycache")
            env.pop("PYTHONDONTWRITEBYTECODE", None)
        mcp_env = {**env, "HOME": str(mcp_home)}
        plain_echoes: list[float] = []
        mcp_echoes: list[float] = []
        probes: dict[str, Callable[[], tuple[float, float]]] = {
            "python -c pass": lambda: _timed_process([sys.executable, "-c", "pass"], env),
            "paicli --version": lambda: _timed_process(version_command(), env),
            "libraries of the prompt": lambda: _timed_process([sys.executable, "-c", FLOOR], env),
            "REPL to first prompt": lambda: _timed_repl(env, workspace, plain_echoes, keys),
            "REPL to first prompt, 2 MCP servers": lambda: _timed_repl(mcp_env, workspace, mcp_echoes, keys),
        }
        for probe in probes.values() if not quick else ():
            probe()  # warm the file cache once
        plain_echoes.clear()
        mcp_echoes.clear()
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
    floor = [libs / bare for libs, bare in zip(walls["libraries of the prompt"], walls["python -c pass"], strict=True)]
    result.add("floor: the prompt's libraries and one pydantic model ÷ python -c pass", median(floor))
    ratios = [repl / bare for repl, bare in zip(walls["REPL to first prompt"], walls["python -c pass"], strict=True)]
    result.add("REPL to first prompt ÷ python -c pass (same round)", median(ratios), at_most=12.0)
    with_mcp = wall["REPL to first prompt, 2 MCP servers"]
    result.add("REPL to first prompt, 2 MCP servers: wall", with_mcp, "ms")
    result.add("REPL to first prompt, 2 MCP servers: wall beyond none", with_mcp - wall["REPL to first prompt"], "ms")
    before_prompt = [float(_helper("prompt")) for _ in range(rounds)]
    result.add("MCP work before the first prompt (2 servers, in process)", median(before_prompt), "ms", at_most=20.0)
    stalls = [[float(v) for v in _helper("stall").split()] for _ in range(rounds)]
    result.add("longest event-loop stall while 2 servers start: median", median([s[0] for s in stalls]), "ms")
    result.add("longest event-loop stall, idle as long: median", median([s[2] for s in stalls]), "ms")
    result.details["mcp_before_prompt_ms"] = [rounded(v) for v in before_prompt]
    result.details["mcp_loop_stall_ms"] = [
        {"starting": rounded(s[0]), "start_s": rounded(s[1]), "idle": rounded(s[2])} for s in stalls
    ]
    for label, echoes in (("no MCP server", plain_echoes), ("2 MCP servers starting", mcp_echoes)):
        result.add(f"key to screen, {label}: median", median(echoes) * 1000, "ms")
        result.add(f"key to screen, {label}: worst", max(echoes) * 1000, "ms")
    result.details["key_echo_ms"] = {
        "no MCP server": [rounded(v * 1000) for v in plain_echoes],
        "2 MCP servers starting": [rounded(v * 1000) for v in mcp_echoes],
    }
    for name in probes:
        result.details[name] = {
            "wall_ms": [rounded(v * 1000) for v in walls[name]],
            "cpu_ms": [rounded(v * 1000) for v in cpus[name]],
        }
    return result
