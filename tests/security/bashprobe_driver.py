"""The driver of tests/security/bashprobe.py, run by the real Python inside the sandbox as its PID 1.

Standard library only: it runs with `python -S` from a bound copy of the interpreter, no site packages.
It reads one JSON object per line on stdin (`{"command": ...}`), runs the command with the real bash
(`/.probe/bash -c COMMAND`, its own session, stdin from /dev/null, in a fresh copy of the workspace),
waits for every process the command left behind (orphans come back to PID 1) up to a time limit, kills
what remains, and answers one JSON line on stdout: the programs the stand-ins logged, what changed in the
writable folders, what bash printed on stderr, its status.

A case starts from the pristine copy: the writable folders are restored whenever the previous case changed
them (a snapshot of every path, its type, mode, size and modification time says so). inotify watches every
writable folder: a case with no event needs no snapshot, and a file opened for writing is seen even when
nothing in it changed (`>> f` with no output is a write too).
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import shutil
import signal
import stat
import struct
import sys
from typing import Any

LOGS = "/.probe/log"  # call.PID: one record per program started (bashprobe.py writes them)
STDERR = "/.probe/log/stderr"
BASH = "/.probe/bash"
IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE = 0x00000002, 0x00000004, 0x00000008
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x00000040, 0x00000080, 0x00000100, 0x00000200
WATCHED = IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
STDERR_KEPT = 600
# Limits of every process of a case (set on the driver, inherited): a runaway line fails, the machine stays.
FILE_BYTES = 64 << 20
MEMORY_BYTES = 1 << 30

Snapshot = dict[str, tuple[object, ...]]


class Timeout(Exception):
    pass


def main() -> int:
    config: dict[str, Any] = json.loads(sys.argv[1])
    driver = Driver(config)
    out = sys.stdout
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        try:
            answer = driver.case(request["command"], float(request.get("timeout", config["timeout"])))
        except OSError as error:  # the case could not start (a command line longer than the kernel takes)
            driver.reset()
            answer = {"calls": [], "writes": [], "status": None, "timed_out": False, "stderr": f"probe: {error}"}
        out.write(json.dumps(answer, ensure_ascii=True) + "\n")
        out.flush()
    return 0


class Driver:
    def __init__(self, config: dict[str, Any]) -> None:
        self.pristine: str = config["pristine"]  # read-only: what every case starts from
        self.template: str = config["template"]  # where the copy goes (the classifier's path for it)
        self.roots: list[str] = config["roots"]  # every writable folder (the template under one of them)
        self.workspace: str = config["workspace"]
        self.env: dict[str, str] = config["env"]
        libc = ctypes.CDLL(None, use_errno=True)
        self._add_watch = libc.inotify_add_watch
        self._add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        self.inotify = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.inotify < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        self.watched: dict[int, str] = {}
        signal.signal(signal.SIGALRM, _alarm)
        resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_BYTES, FILE_BYTES))
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
        self.reset()
        self.baseline = self.snapshot()

    # ---- one case ----

    def case(self, command: str, timeout: float) -> dict[str, Any]:
        _clear_calls()
        _truncate(STDERR)
        self._drain()
        status, timed_out = self.run(command, timeout)
        touched, opened = self._drain()
        writes: list[tuple[str, str]] = []
        if touched:  # no event, no change: the snapshot is only taken when something happened
            after = self.snapshot()
            writes = _diff(self.baseline, after)
            seen = {path for _, path in writes}
            writes += [("opened for writing", p) for p in sorted(opened) if p not in seen and p in after]
            if any(kind != "opened for writing" for kind, _ in writes):
                self.reset()
        calls = _calls()
        with open(STDERR, "rb") as handle:
            stderr = handle.read(STDERR_KEPT).decode("utf-8", "replace")
        return {
            "calls": calls,
            "writes": [f"{kind} {self._shown(path)}" for kind, path in writes],
            "status": status,
            "timed_out": timed_out,
            "stderr": stderr,
        }

    def run(self, command: str, timeout: float) -> tuple[int | None, bool]:
        """Runs the command and waits for every process it started; (its exit status, timed out?)."""
        os.chdir(self.workspace)
        actions = [
            (os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, "/dev/null", os.O_WRONLY, 0),
            (os.POSIX_SPAWN_OPEN, 2, STDERR, os.O_WRONLY | os.O_APPEND, 0),
        ]
        # argv[0] is `bash`, as for paicli's `bash -c`: `$0` names the stand-in, not the real bash
        pid = os.posix_spawn(BASH, ["bash", "-c", command], self.env, file_actions=actions, setsid=True)
        os.chdir("/")
        status: int | None = None
        timed_out = False
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            while True:  # the command, then the orphans it left (PID 1 inherits them): until none is left
                done, code = os.wait()
                if done == pid:
                    status = os.waitstatus_to_exitcode(code)
        except ChildProcessError:
            pass
        except Timeout:
            timed_out = True
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        if timed_out:
            os.kill(-1, signal.SIGKILL)  # from PID 1: every other process of the sandbox
            try:
                while True:
                    done, code = os.wait()
                    if done == pid:
                        status = os.waitstatus_to_exitcode(code)
            except ChildProcessError:
                pass
        return status, timed_out

    # ---- the writable folders ----

    def reset(self) -> None:
        """Every writable folder emptied, the pristine template copied back, inotify watching its folders."""
        for root in self.roots:
            for name in os.listdir(root):
                _remove(os.path.join(root, name))
        os.makedirs(self.template, exist_ok=True)
        for name in os.listdir(self.pristine):
            shutil.copytree(os.path.join(self.pristine, name), os.path.join(self.template, name), symlinks=True)
        self.watched.clear()
        for root in self.roots:
            for folder, _, _ in os.walk(root):
                wd = self._add_watch(self.inotify, os.fsencode(folder), WATCHED)
                if wd >= 0:
                    self.watched[wd] = folder

    def snapshot(self) -> Snapshot:
        """Each path under the writable folders: type, mode, size, modification time (a folder's own times
        left out: bash's here-document files come and go in /tmp)."""
        state: Snapshot = {}
        for root in self.roots:
            for folder, dirs, files in os.walk(root):
                for name in dirs + files:
                    path = os.path.join(folder, name)
                    info = os.lstat(path)
                    if stat.S_ISDIR(info.st_mode):
                        state[path] = ("dir", info.st_mode)
                    elif stat.S_ISLNK(info.st_mode):
                        state[path] = ("link", info.st_mode, os.readlink(path))
                    else:
                        state[path] = ("file", info.st_mode, info.st_size, info.st_mtime_ns)
        return state

    def _drain(self) -> tuple[bool, set[str]]:
        """Whether anything happened in the writable folders since the last call, and the paths closed
        after being opened for writing."""
        touched = False
        paths: set[str] = set()
        while True:
            try:
                data = os.read(self.inotify, 65536)
            except BlockingIOError:
                return touched, paths
            touched = True
            offset = 0
            while offset < len(data):
                wd, mask, _, length = struct.unpack_from("iIII", data, offset)
                name = data[offset + 16 : offset + 16 + length].split(b"\0", 1)[0]
                offset += 16 + length
                if wd in self.watched and name and mask & IN_CLOSE_WRITE:
                    paths.add(os.path.join(self.watched[wd], os.fsdecode(name)))

    def _shown(self, path: str) -> str:
        """`ws/PWN`, `outside/x` for the template's folders; other paths as they are (`/tmp/x`)."""
        if path.startswith(self.template + "/"):
            return path[len(self.template) + 1 :]
        return path


def _diff(before: Snapshot, after: Snapshot) -> list[tuple[str, str]]:
    changes = []
    for path in sorted(before.keys() | after.keys()):
        old, new = before.get(path), after.get(path)
        if old == new:
            continue
        if old is None:
            changes.append(("created", path))
        elif new is None:
            changes.append(("removed", path))
        elif old[0] == new[0] and old[1] != new[1] and old[2:] == new[2:]:
            changes.append(("chmod", path))
        else:
            changes.append(("changed", path))
    return changes


def _calls() -> list[dict[str, Any]]:
    """The records the stand-ins and the not-found handler wrote, in the order they were written: kind,
    time, cwd, name, count, arguments, each ended by NUL."""
    records = []
    for entry in os.scandir(LOGS):
        if entry.name.startswith("call."):
            with open(entry.path, "rb") as handle:
                fields = [os.fsdecode(field) for field in handle.read().split(b"\0")]
            records.append((fields[1] if len(fields) > 1 else "", entry.name, fields))
    calls = []
    for _, _, fields in sorted(records):
        kind, _, cwd, name, count = (fields + [""] * 5)[:5]
        if kind not in ("S", "N") or not count.isdigit():
            calls.append({"found": True, "cwd": "", "name": "(garbled log)", "argv": fields})
            continue
        calls.append({"found": kind == "S", "cwd": cwd, "name": name, "argv": fields[5 : 5 + int(count)]})
    return calls


def _clear_calls() -> None:
    for entry in os.scandir(LOGS):
        if entry.name.startswith("call."):
            os.unlink(entry.path)


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        for folder, dirs, _ in os.walk(path):
            for name in dirs:
                os.chmod(os.path.join(folder, name), 0o700, follow_symlinks=False)
        shutil.rmtree(path)
    else:
        os.unlink(path)


def _truncate(path: str) -> None:
    with open(path, "wb"):
        pass


def _alarm(signum: int, frame: object) -> None:
    raise Timeout


if __name__ == "__main__":
    raise SystemExit(main())
