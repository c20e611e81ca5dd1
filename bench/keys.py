"""15. Keys: how long ESC at the REPL's prompt takes to act (issue 20: it took about 1.5 s, prompt_toolkit's
wait for the rest of an escape sequence; target ≤ 100 ms).

The REPL runs in a pseudo-terminal (pexpect) against the fake server, as a user's would. Each round types
`/plan` (the prompt turns into `plan› `: the next message will be planned), waits until everything is drawn,
then sends ESC, which drops the planned message, and times until the prompt is redrawn. The time includes
the terminal round trip and the redraw, not only the wait: an upper bound of what a user feels. For the
floor, each round also types a letter and times its echo (the same round trip and redraw, no wait).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import pexpect

from bench.common import Result, median, percentile, rounded
from bench.repl import PROMPT, repl_env, spawn_repl
from bench.startup import drain
from tests.fakellm import FakeLLM

NAME = "keys"
TITLE = "Keys: ESC at the prompt"

ESC = "\x1b"


def esc_latencies(rounds: int) -> tuple[list[float], list[float]]:
    """Seconds from ESC to the redrawn prompt, and (the floor) from a typed letter to its echo, per round."""
    with FakeLLM() as fake, tempfile.TemporaryDirectory() as folder:
        home, workspace = Path(folder) / "home", Path(folder) / "workspace"
        home.mkdir()
        workspace.mkdir()
        child = spawn_repl(workspace, repl_env(home, fake.base_url))
        seconds: list[float] = []
        echoes: list[float] = []
        try:
            child.expect_exact(PROMPT)
            for _ in range(rounds + 1):  # the first round warms up (completion and the rest load)
                child.send("/plan\r")
                child.expect_exact("plan" + PROMPT)
                drain(child)
                sent = time.perf_counter()
                child.send(ESC)
                child.expect_exact(PROMPT)
                seconds.append(time.perf_counter() - sent)
                drain(child)
                sent = time.perf_counter()
                child.send("q")  # a letter the toolbar never shows
                child.expect_exact("q")
                echoes.append(time.perf_counter() - sent)
                child.sendcontrol("u")
            child.sendcontrol("d")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
        return seconds[1:], echoes[1:]


def run(quick: bool = False) -> Result:
    seconds, echoes = esc_latencies(2 if quick else 30)
    milliseconds = [s * 1000 for s in seconds]
    echo_ms = [s * 1000 for s in echoes]
    details = {"esc_ms": [rounded(v) for v in milliseconds], "echo_ms": [rounded(v) for v in echo_ms]}
    result = Result(NAME, TITLE, details=details)
    result.add("ESC at the prompt to redrawn prompt: p50", median(milliseconds), "ms", at_most=100.0)
    result.add("ESC at the prompt to redrawn prompt: p90", percentile(milliseconds, 90), "ms")
    result.add("ESC at the prompt to redrawn prompt: worst", max(milliseconds), "ms")
    result.add("a typed letter to its echo (the terminal's round trip): p50", median(echo_ms), "ms")
    beyond = [esc - echo for esc, echo in zip(milliseconds, echo_ms, strict=True)]
    result.add("ESC beyond a letter's echo: p50", median(beyond), "ms")
    return result
