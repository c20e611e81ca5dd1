"""The audit log: one JSON line per tool call with its approval decision, under ~/.paicli/audit/.

    ~/.paicli/audit/2025-01-31.jsonl   (local date; the folder is 0700, the files 0600)
    {"ts": 1738300000.1, "time": "2025-01-31T10:00:00", "session": "…", "workspace": "/src/app",
     "task_id": "task_2", "tool": "execute_command", "arguments": {"command": "pytest -q"},
     "decision": "approved_by_user", "reason": "pytest runs the project's code, which can do anything"}

Secrets are masked in every string before it is written, and long strings (a whole file given to
write_file) are cut, so the log stays readable and small. A log that cannot be written never stops a
tool call: the error is kept in `last_error` (and shown by `/audit`).
"""

from __future__ import annotations

import json
import os
import secrets as random
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from paicli.common.atomic_write import write_all
from paicli.tools.output import mask_secrets

STRING_CAP = 2000  # characters kept of one string argument
DEFAULT_SHOWN = 20


def audit_folder(home: Path) -> Path:
    return home / ".paicli" / "audit"


class AuditLog:
    def __init__(
        self,
        folder: Path,
        *,
        secrets: Sequence[str] = (),
        workspace: Path | None = None,
        session: str | None = None,
    ) -> None:
        self.folder = folder
        self.secrets = list(secrets)
        self.workspace = str(workspace) if workspace is not None else None
        self.session = session or f"{time.strftime('%Y%m%d-%H%M%S')}-{random.token_hex(3)}"
        self.last_error: str | None = None

    def record(
        self,
        *,
        tool: str,
        arguments: Any,
        decision: str,
        reason: str = "",
        task_id: str | None = None,
        programs: tuple[str, ...] | None = None,
    ) -> None:
        """`programs`: for a command, what the classifier believes it starts (the audit shows what was
        judged, beside the decision)."""
        now = time.time()
        entry = {
            "ts": now,
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(now)),
            "session": self.session,
            "workspace": self.workspace,
            "task_id": task_id,
            "tool": tool,
            "arguments": self._clean(arguments),
            "decision": decision,
            "reason": self._clean(reason),
        }
        if programs is not None:
            entry["programs"] = [self._clean(name) for name in programs]
        line = json.dumps(entry, ensure_ascii=False) + "\n"
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            path = self.folder / f"{time.strftime('%Y-%m-%d', time.localtime(now))}.jsonl"
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                write_all(fd, line.encode("utf-8"))  # one write per line (a short one is finished): never mixed
            finally:
                os.close(fd)
        except OSError as error:
            self.last_error = f"cannot write the audit log in {self.folder}: {error.strerror or error}"

    def _clean(self, value: Any) -> Any:
        """Secrets masked in every string (keys included), long strings cut."""
        if isinstance(value, str):
            text = mask_secrets(value, self.secrets)
            if len(text) > STRING_CAP:
                text = text[:STRING_CAP] + f"[... {len(text) - STRING_CAP} more characters not logged]"
            return text
        if isinstance(value, dict):
            return {self._clean(str(k)): self._clean(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._clean(v) for v in value]
        if value is None or isinstance(value, bool | int | float):
            return value
        return self._clean(str(value))


def read_entries(folder: Path, limit: int = DEFAULT_SHOWN) -> list[dict[str, Any]]:
    """The latest `limit` entries, oldest first. Unreadable lines are passed over."""
    entries: list[dict[str, Any]] = []
    for path in sorted(folder.glob("*.jsonl"), reverse=True) if folder.is_dir() else []:
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        for line in reversed(lines):
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(entry, dict):
                entries.append(entry)
                if len(entries) >= limit:
                    return list(reversed(entries))
    return list(reversed(entries))


def format_entries(entries: Iterable[dict[str, Any]]) -> list[str]:
    """One line per entry: `10:00:01 task_2 execute_command pytest -q → approved_by_user`."""
    lines = []
    for entry in entries:
        when = str(entry.get("time", ""))[11:19] or "?"
        task = f" [{entry['task_id']}]" if entry.get("task_id") else ""
        what = _summary(entry.get("tool", "?"), entry.get("arguments"))
        reason = entry.get("reason") or ""
        decision = str(entry.get("decision", "?"))
        tail = f" ({reason})" if reason and not decision.startswith("allowed") else ""
        lines.append(f"{when}{task} {entry.get('tool', '?')} {what} → {decision}{tail}")
    return lines


def _summary(tool: str, arguments: Any) -> str:
    if not isinstance(arguments, dict):
        return str(arguments)[:120]
    for key in ("command", "path", "pattern"):
        if isinstance(arguments.get(key), str):
            text = " ".join(arguments[key].split())
            return text if len(text) <= 120 else text[:119] + "…"
    return ""
