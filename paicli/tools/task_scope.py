"""What one plan task may do, as the plan contract declares it: which effects its tool calls may have
(read, write files, execute), and which workspace paths it may write. The approval policy enforces it
on every call, in every approval mode (paicli/policy/scope.py); the plan layer builds it from the task."""

from __future__ import annotations

from dataclasses import dataclass

from paicli.tools.effect import Effect


@dataclass(frozen=True)
class TaskScope:
    task_id: str
    kind: str  # the task's type, for messages: "FILE_READ"
    effects: frozenset[Effect]
    # Declared paths ("app.py", "tests/"): what the file tools may write (FILE_WRITE) or, in the sandbox,
    # the commands (COMMAND, VERIFICATION); None: the whole workspace.
    writable: tuple[str, ...] | None = None

    def describe(self) -> str:
        """`task_3 (FILE_WRITE) may read, and change only app.py, tests/`."""
        can = ["read"]
        if Effect.NETWORK in self.effects:
            can.append("fetch web pages")
        if Effect.WRITE in self.effects:
            can.append("change " + ("only " + ", ".join(self.writable) if self.writable is not None else "files"))
        if Effect.EXECUTE in self.effects:
            if self.writable is None:
                can.append("run commands")
            else:
                can.append(
                    "run commands that write " + ("only " + ", ".join(self.writable) if self.writable else "nothing")
                )
        return f"{self.task_id} ({self.kind}) may " + (", and ".join(can) if len(can) < 3 else ", ".join(can))
