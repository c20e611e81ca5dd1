"""A long scripted chat: the real REPL (`python -m paicli`) in a pseudo-terminal, talking to the fake model
server, turn after turn. Shared by the memory (bench/memory.py) and token-economy (bench/long_chat.py)
benchmarks.

Every turn is what a coding chat mostly is: the user asks about a file, the model reads it (`read_file`,
a few KB) and answers in Markdown (a heading, a list, a code block). The fake serves the replies in turn
order (turns are sequential), so answer n ends with its marker `done-n` and the driver knows when turn n is
over: the marker shows, then the prompt. Compression requests (the only ones without tools) get a short
structured state.

Why a pty and not the turn machinery in-process: a scripted turn costs the REPL ~0.1 s, so 500 turns take
a minute or two, and a pty exercises every part that could hold on to a turn (the prompt's history, the
renderer and its live view, the transcript, the session log, checkpoints) exactly as a user runs them,
while the RSS is read from /proc of a process that runs nothing else.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pexpect

from bench.repl import PROMPT, repl_env, spawn_repl
from tests.fakellm import Body, FakeLLM, Reply

NOTE_FILES = 10
ANSI = r"(?:\x1b\[[0-9;?]*[A-Za-z])*"  # style codes rich may put between any two characters


def _last_role(body: Body) -> str | None:
    messages = body.get("messages") or [{}]
    return messages[-1].get("role")  # type: ignore[no-any-return]


def asks_a_tool(body: Body) -> bool:
    """A turn's first request: the user's message is last."""
    return bool(body.get("tools")) and _last_role(body) == "user"


def after_a_tool(body: Body) -> bool:
    """A turn's second request: the tool result is last."""
    return bool(body.get("tools")) and _last_role(body) == "tool"


def compresses(body: Body) -> bool:
    return not body.get("tools")


def note_text(index: int, chars: int) -> str:
    """A workspace file of about `chars` characters, different for each index."""
    line = f"Note {index}: the parser keeps a stack of open blocks and closes them at the end of input.\n"
    return (line * (chars // len(line) + 1))[:chars]


def answer_text(turn: int, chars: int) -> str:
    """A Markdown answer of about `chars` characters, ending with the turn's marker."""
    body = (
        f"## What notes/{turn % NOTE_FILES}.md says (turn {turn})\n\n"
        "- the parser keeps a **stack** of open blocks\n- it closes them at the end of input\n\n"
        f"```python\ndef close_all(stack):\n    while stack:\n        stack.pop().close()  # {turn}\n```\n\n"
    )
    filler = "The rest of the file repeats this rule for each kind of block. " * (max(0, chars - len(body)) // 63)
    return f"{body}{filler}\n\ndone-{turn}."


STATE = "## Goal\nRead the notes.\n\n## Done\nThe notes were read and explained.\n\n## Next\nMore questions.\n"


def script(fake: FakeLLM, turns: int, *, answer_chars: int) -> None:
    """The model's side of `turns` turns: a read_file call, then the answer."""
    calls = [Reply.tool_calls([("read_file", {"path": f"notes/{n % NOTE_FILES}.md"})]) for n in range(1, turns + 1)]
    fake.on(asks_a_tool, *calls)
    fake.on(after_a_tool, *(Reply.text(answer_text(n, answer_chars), chunk=64) for n in range(1, turns + 1)))
    fake.on(compresses, Reply.text(STATE), repeat=True)


def question(turn: int) -> str:
    return f"turn {turn}: what does notes/{turn % NOTE_FILES}.md say?"


def _expect_text(child: pexpect.spawn, text: str, timeout: float) -> None:
    """Waits until `text` shows, ignoring terminal styling between its characters."""
    child.expect(ANSI.join(re.escape(ch) for ch in text), timeout=timeout)


class ReplSession:
    """One REPL process in a pseudo-terminal; `turn` sends a message and waits for its answer and the prompt."""

    def __init__(self, child: pexpect.spawn) -> None:
        self.child = child

    def turn(self, number: int, timeout: float = 60.0) -> None:
        self.child.send(question(number) + "\r")  # Enter (a line feed is Ctrl+J: a new line)
        _expect_text(self.child, f"done-{number}.", timeout)
        self.child.expect_exact(PROMPT, timeout=timeout)

    def memory_kb(self) -> tuple[int, int]:
        return memory_kb(self.child.pid)


def memory_kb(pid: int) -> tuple[int, int]:
    """A process's resident set now and its peak (VmRSS, VmHWM) in KB; (0, 0) once it is gone. VmHWM is the
    peak of the current image: a child's `ru_maxrss` would also count the parent's pages it was forked with."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0, 0
    fields = {
        line.split(":")[0]: line.split()[1] for line in status.splitlines() if line.startswith(("VmRSS", "VmHWM"))
    }
    return int(fields.get("VmRSS", 0)), int(fields.get("VmHWM", 0))


@contextmanager
def repl_session(fake: FakeLLM, folder: Path, *, note_chars: int, config: str = "") -> Iterator[ReplSession]:
    """The REPL on a workspace of notes in `folder`, with `config` as its ~/.paicli/config.toml."""
    home, workspace = folder / "home", folder / "workspace"
    (home / ".paicli").mkdir(parents=True, exist_ok=True)
    (home / ".paicli" / "config.toml").write_text(config)
    (workspace / "notes").mkdir(parents=True, exist_ok=True)
    for index in range(NOTE_FILES):
        (workspace / "notes" / f"{index}.md").write_text(note_text(index, note_chars))
    child = spawn_repl(workspace, repl_env(home, fake.base_url), timeout=60)
    try:
        child.expect_exact(PROMPT)
        yield ReplSession(child)
        child.sendcontrol("d")
        child.expect(pexpect.EOF, timeout=30)
    finally:
        child.close(force=True)
