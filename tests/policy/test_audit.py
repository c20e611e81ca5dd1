"""The audit log: JSON lines per day under ~/.paicli/audit/, secrets masked, long strings cut, read back."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from paicli.policy.audit import STRING_CAP, AuditLog, audit_folder, format_entries, read_entries

KEY = "sk-proj-0123456789abcdef"


def test_each_record_is_one_json_line_in_todays_file_with_private_modes(tmp_path: Path) -> None:
    folder = audit_folder(tmp_path)
    log = AuditLog(folder, workspace=Path("/src/app"))
    log.record(tool="read_file", arguments={"path": "a.py"}, decision="allowed", task_id="task_1")
    log.record(tool="execute_command", arguments={"command": "pytest"}, decision="refused_by_policy", reason="r")
    [path] = list(folder.glob("*.jsonl"))
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    assert [e["tool"] for e in entries] == ["read_file", "execute_command"]
    assert entries[0]["task_id"] == "task_1" and entries[0]["workspace"] == "/src/app"
    assert entries[0]["session"] == entries[1]["session"] and path.name == entries[0]["time"][:10] + ".jsonl"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_secrets_are_masked_everywhere_and_long_strings_are_cut(tmp_path: Path) -> None:
    log = AuditLog(tmp_path, secrets=[KEY])
    log.record(
        tool="write_file",
        arguments={"path": f"{KEY}.txt", "content": f"key={KEY}\n" + "x" * 50_000, KEY: [KEY]},
        decision="allowed",
        reason=f"mentions {KEY}",
    )
    text = next(tmp_path.glob("*.jsonl")).read_text()
    assert KEY not in text
    entry = json.loads(text)
    assert entry["arguments"]["path"] == "***.txt"
    assert len(entry["arguments"]["content"]) < STRING_CAP + 100 and "more characters not logged" in text


def test_an_unwritable_folder_is_reported_not_raised(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    log = AuditLog(blocker / "audit")
    log.record(tool="ls", arguments={}, decision="allowed")
    assert log.last_error and "cannot write the audit log" in log.last_error


def test_the_latest_entries_come_back_oldest_first_across_days(tmp_path: Path) -> None:
    old = {"time": "2024-01-01T09:00:00", "tool": "read_file", "arguments": {"path": "old.py"}, "decision": "allowed"}
    (tmp_path / "2024-01-01.jsonl").write_text(json.dumps(old) + "\nnot json\n")
    log = AuditLog(tmp_path)
    for n in range(3):
        log.record(tool="execute_command", arguments={"command": f"make {n}"}, decision="approved_by_user")
    assert [e["arguments"].get("command") for e in read_entries(tmp_path, 2)] == ["make 1", "make 2"]
    everything = read_entries(tmp_path, 10)
    assert len(everything) == 4 and everything[0]["arguments"] == {"path": "old.py"}
    lines = format_entries(everything)
    assert lines[0] == "09:00:00 read_file old.py → allowed"
    assert lines[-1].endswith("execute_command make 2 → approved_by_user")
    assert read_entries(tmp_path / "missing", 5) == []
