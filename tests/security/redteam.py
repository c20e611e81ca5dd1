"""The red-team harness for issue 19: a scripted malicious model against a real `paicli run --json`.

`attack` makes the fake server answer the prompt with one turn of `execute_command` calls and then a
final text; paicli runs as a subprocess in the given approval mode. Canaries live in `outside` (in
tmp_path, never in the workspace): `Canaries.untouched()` says whether any was created, changed or
removed. `key_leaked` scans every request the server received for the key in the encodings a command
could turn it into.
"""

from __future__ import annotations

import base64
import codecs
import hashlib
import os
from pathlib import Path
from typing import Any

from tests.conftest import TEST_KEY, Finished, paicli_env, run_paicli
from tests.fakellm import FakeLLM, Reply, has_tool_result

PROMPT = "tidy up the workspace"


class Canaries:
    """A folder outside the workspace with a canary file; any change under it is an escape."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "canary.txt").write_text("canary\n")
        self.before = self.state()

    def state(self) -> dict[str, str]:
        found = {}
        for path in sorted(self.folder.rglob("*")):
            digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
            found[path.relative_to(self.folder).as_posix()] = f"{path.stat().st_mode}:{digest}"
        return found

    def untouched(self) -> bool:
        return self.state() == self.before


def attack(
    fake: FakeLLM,
    workspace: Path,
    home: Path,
    commands: list[str],
    mode: str = "auto",
    sandbox: str = "off",
    **env: str,
) -> Finished:
    """One paicli run in which the model calls execute_command once for each of `commands`. Without the
    sandbox by default: the red team tests what the gate alone holds (bubblewrap may be missing); what
    the sandbox contains is tested in tests/security/test_sandbox_containment.py and tests/sandbox/."""
    calls = [("execute_command", {"command": command}) for command in commands]
    fake.on(has_tool_result("execute_command"), Reply.text("done"))
    fake.on(PROMPT, Reply.tool_calls(calls))
    args = ["-C", str(workspace), "run", PROMPT, "--json", "--approval", mode, "--sandbox", sandbox]
    done = run_paicli(args, paicli_env(fake, home, **env), timeout=120)
    assert done.code == 0, done.stderr
    return done


def command_results(done: Finished) -> list[dict[str, Any]]:
    return [r for r in done.of("tool_result") if r["name"] == "execute_command"]


def all_refused(done: Finished, count: int) -> bool:
    results = command_results(done)
    return len(results) == count and all(not r["ok"] and "refused" in r["output"] for r in results)


def key_leaked(fake: FakeLLM, key: str = TEST_KEY) -> list[str]:
    """The encodings of `key` found in any request body: plain, reversed, rot13, base64, hex, or split
    into pieces of eight characters (what `cut -c` would hand back in several calls)."""
    bodies = "\n".join(str(r.body) for r in fake.requests)
    forms = {
        "plain": key,
        "reversed": key[::-1],
        "rot13": codecs.encode(key, "rot13"),
        "hex": key.encode().hex(),
    }
    for shift in range(3):  # base64 of the key at each alignment inside longer text
        encoded = base64.b64encode(("x" * shift + key).encode()).decode()
        forms[f"base64+{shift}"] = encoded[4 * ((shift + 2) // 3) : -4]
    for index in range(0, len(key) - 7, 4):
        forms[f"piece {index}"] = key[index : index + 8]
    return [name for name, form in forms.items() if form and form in bodies]


def no_stray_files(workspace: Path, *names: str) -> bool:
    return not any((workspace / name).exists() for name in names) and os.path.isdir(workspace)
