"""The suite's own commands (setup and hidden check) run in the sandbox like the agent's, and are started
once more when bubblewrap could not set them up (paicli/sandbox/launch.py). Real bwrap."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from paicli.eval.commands import Containing, run_command
from paicli.sandbox import SandboxChoice
from tests.sandboxing import FolderGoes, bwrap_sandbox, dead_socket


@dataclass(frozen=True)
class Racing(Containing):
    """Contained by a sandbox whose socket folder goes just after the command's options are built."""

    sandbox: FolderGoes | None = None

    def choice(self, work: Path, *, network: bool) -> SandboxChoice | None:
        return SandboxChoice("bwrap", self.sandbox)


async def test_a_check_bwrap_could_not_set_up_is_started_once_more(workspace: Path, home: Path) -> None:
    folder = home / ".daemon" / "run"
    dead_socket(folder)
    racing = FolderGoes.of(bwrap_sandbox(workspace, home), folder)
    containing = Racing(True, home, sandbox=racing)
    finished = await run_command(
        "echo ran >> counter; echo checked", workspace, {}, containing, network=False, timeout=30
    )
    assert (finished.exit_code, finished.output) == (0, "checked\n")
    assert (workspace / "counter").read_text() == "ran\n" and len(racing.builds) == 2
