"""The REPL as the benchmarks drive it: one environment (no PAICLI_/OPENAI_ settings of the caller's, the
fake server's address, a bench key, no cursor-position requests) and one pexpect spawn of
`python -m paicli -C WORKSPACE` from the repository's root."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pexpect

from bench.common import REPO

PROMPT = "› "


def repl_env(home: Path, base_url: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PAICLI_", "OPENAI_"))}
    env.update(
        HOME=str(home),
        TERM="xterm",
        LANG="C.UTF-8",
        PAICLI_API_KEY="bench-key-0000",
        PAICLI_BASE_URL=base_url,
        PROMPT_TOOLKIT_NO_CPR="1",
        **extra,
    )
    return env


def spawn_repl(workspace: Path, env: dict[str, str], *, timeout: float = 30) -> pexpect.spawn:
    """The REPL on `workspace`, 40 × 120; sends without pexpect's 50 ms pause before each send (which
    would be timed too)."""
    child = pexpect.spawn(
        sys.executable,
        ["-m", "paicli", "-C", str(workspace)],
        cwd=str(REPO),
        env=env,
        encoding="utf-8",
        codec_errors="replace",
        timeout=timeout,
        dimensions=(40, 120),
    )
    child.delaybeforesend = None
    return child
