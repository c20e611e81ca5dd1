"""Runs command lines with the real bash in a sandbox where no real program runs, and reports what bash
started and what it wrote.

Under bubblewrap (no network, no other namespace shared, `--die-with-parent`), logging stand-ins are bound
over every folder programs are looked up in: `/usr/bin` (and `/bin`), `/usr/sbin` (and `/sbin`),
`/usr/local/bin`, `/usr/local/sbin`, which are also the whole of the sandbox's PATH. One script, and one
symlink to it per program name found in the real folders (plus the names the caller adds): run, it
writes its name and argv (NUL-separated) to a log file of its own in a private folder and exits 0 with no
output. Its
interpreter is the real bash bound at `/.probe/bash` (`-p`: no BASH_ENV, no exported functions), outside
every covered folder. Names with no stand-in are logged by a `command_not_found_handle` (given by
BASH_ENV to the bash that runs the case).

The cases run in batches: one sandbox holds a small driver (tests/security/bashprobe_driver.py, run by
the real Python from outside the covered folders as PID 1) that runs each case in turn from a fresh copy
of the workspace template, waits for whatever the case left running, kills it at the time limit, and
diffs the writable folders (the workspace, a canary folder beside it, /tmp). Everything else is
read-only. Used by tests/security/test_bash_agreement.py and `python -m bench fuzz-shell`.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from tests.security.shellgen import HOSTILE_NAMES

# Where programs are looked up: the system folders (/bin and /sbin are links to /usr's on most systems).
SYSTEM_FOLDERS = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")
DRIVER = Path(__file__).with_name("bashprobe_driver.py")
# Each process logs to a file of its own (bash's printf flushes at every newline of an argument: records
# appended to one file by programs running at once would interleave), with the time, to order them.
_STANDIN = """#!/.probe/bash -p
printf '%s\\0' S "$EPOCHREALTIME" "$PWD" "$0" "$#" "$@" >/.probe/log/call.$$
exit 0
"""
_NOT_FOUND = """command_not_found_handle() {
  printf '%s\\0' N "$EPOCHREALTIME" "$PWD" "$1" "$(($# - 1))" "${@:2}" >/.probe/log/call.$BASHPID
  return 127
}
"""
# What some template files hold: the code `source payload` runs (see SOURCED_PROGRAMS).
PAYLOAD = "touch PWN\n"
SOURCED_PROGRAMS = frozenset({"touch"})


class ProbeError(Exception):
    """The sandbox could not be started, or its driver stopped answering."""


@dataclass(frozen=True)
class Started:
    """One program bash started (or tried: `found` False when there was no such program)."""

    name: str  # as the classifier names it: the basename for a system folder, else as bash ran it
    argv: tuple[str, ...]  # its arguments, without the name
    cwd: str  # the folder it ran in
    found: bool = True

    @property
    def words(self) -> tuple[str, ...]:
        return (self.name, *self.argv)


@dataclass(frozen=True)
class Run:
    command: str
    started: tuple[Started, ...]
    writes: tuple[str, ...]  # "created ws/PWN", "changed outside/canary.txt", "opened for writing ws/x", ...
    status: int | None
    timed_out: bool
    stderr: str

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s.name for s in self.started))


def search_path() -> str:
    """The sandbox's PATH: the system folders this machine has (each covered by the stand-ins)."""
    return os.pathsep.join(folder for folder in SYSTEM_FOLDERS if os.path.isdir(folder))


def program_name(path: str, covered: Iterable[str] = SYSTEM_FOLDERS) -> str:
    """`/usr/bin/ls` → `ls`; `./ls` or `sub/ls` as written (the classifier's normalisation)."""
    folder, _, name = path.rpartition("/")
    return name if name and folder in set(covered) else path


def make_template(root: Path) -> Path:
    """A workspace (a git repository with hostile file names, a canary, files of code) and a canary folder
    beside it, under `root/template`; returns the workspace. No file is executable: only bash's own
    reading of the line decides what runs."""
    work = root / "template" / "ws"
    work.mkdir(parents=True)
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q", str(work)], check=True, capture_output=True)
        shutil.rmtree(work / ".git" / "hooks", ignore_errors=True)
    (work / "canary.txt").write_text("canary\n")
    (work / "payload").write_text(PAYLOAD)
    (work / "arith").write_text("a[$(touch PWN)]\n")
    (work / "empty").write_text("")
    (work / "src").mkdir()
    (work / "src" / "a.py").write_text("x = 1\n")
    for name in HOSTILE_NAMES:
        (work / name).write_text(PAYLOAD)
    (root / "template" / "outside").mkdir()
    (root / "template" / "outside" / "canary.txt").write_text("outside\n")
    return work


class BashProbe:
    """One sandbox, started on first use, running cases one after another. `workspace` is the template
    the classifier must be shown (the sandbox's workspace has the same path and the same files)."""

    def __init__(self, folder: Path, *, names: Iterable[str] = (), timeout: float = 3.0) -> None:
        self.folder = folder
        self.timeout = timeout
        self.workspace = make_template(folder)
        self.search_path = search_path()
        self.covered = tuple(f for f in SYSTEM_FOLDERS if os.path.isdir(f))
        self._names = set(names)
        self._process: subprocess.Popen[bytes] | None = None
        self._buffer = b""
        self._pending: list[tuple[list[str], float]] = []
        self.launches = 0

    def __enter__(self) -> BashProbe:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- running cases ----

    def run(self, command: str, *, timeout: float | None = None) -> Run:
        return self.run_many([command], timeout=timeout)[0]

    def run_many(self, commands: list[str], *, timeout: float | None = None) -> list[Run]:
        self.submit(commands, timeout=timeout)
        return self.collect()

    def submit(self, commands: list[str], *, timeout: float | None = None) -> None:
        """Hands the commands to the sandbox, which runs them one after another while the caller does
        something else (classifies them, draws the next ones); `collect` returns what they did."""
        limit = self.timeout if timeout is None else timeout
        process = self._started()
        assert process.stdin is not None
        try:
            for command in commands:
                process.stdin.write(json.dumps({"command": command, "timeout": limit}).encode() + b"\n")
            process.stdin.flush()
        except OSError as error:
            self._failed(error)
        self._pending.append((commands, limit))

    def collect(self) -> list[Run]:
        """The runs of the commands submitted first and not collected yet."""
        commands, limit = self._pending.pop(0)
        try:
            answers = [json.loads(self._line(2 * limit + 60)) for _ in commands]  # a busy machine is slow
        except (OSError, ValueError) as error:
            self._failed(error)
        return [self._run(command, answer) for command, answer in zip(commands, answers, strict=True)]

    def _failed(self, error: Exception) -> NoReturn:
        problem = self._stderr()
        self.close()
        raise ProbeError(f"the probe's driver stopped answering ({error}): {problem}") from error

    def _run(self, command: str, answer: dict[str, Any]) -> Run:
        started = tuple(self._started_program(call) for call in answer["calls"])
        return Run(command, started, tuple(answer["writes"]), answer["status"], answer["timed_out"], answer["stderr"])

    def close(self) -> None:
        self._pending.clear()
        process, self._process = self._process, None
        if process is None:
            return
        with contextlib.suppress(OSError):
            assert process.stdin is not None
            process.stdin.close()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()

    def _started_program(self, call: dict[str, object]) -> Started:
        name = str(call["name"])
        argv = call["argv"]
        assert isinstance(argv, list)
        shown = program_name(name, self.covered) if call["found"] else name
        return Started(shown, tuple(str(a) for a in argv), str(call["cwd"]), bool(call["found"]))

    def _line(self, timeout: float) -> bytes:
        process = self._process
        assert process is not None and process.stdout is not None
        fd = process.stdout.fileno()
        while b"\n" not in self._buffer:
            ready, _, _ = select.select([fd], [], [], timeout)
            if not ready:
                raise OSError(f"no answer in {timeout:g} s")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise OSError("the driver exited")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def _stderr(self) -> str:
        process = self._process
        if process is None or process.stderr is None:
            return ""
        with contextlib.suppress(OSError):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(5)
            return process.stderr.read().decode(errors="replace").strip()[-2000:]
        return ""

    # ---- the sandbox ----

    def _started(self) -> subprocess.Popen[bytes]:
        if self._process is not None and self._process.poll() is None:
            return self._process
        self.close()
        bwrap = shutil.which("bwrap")
        if bwrap is None:
            raise ProbeError("bubblewrap (bwrap) is not installed")
        argv = [bwrap, *self._options(), "/.probe/python", "-S", "-B", "-s", "/.probe/driver.py", self._config()]
        env = {"PATH": self.search_path, "PYTHONHOME": sys.base_prefix, "LANG": "C.UTF-8"}
        self._process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,
        )
        self._buffer = b""
        self.launches += 1
        return self._process

    def _config(self) -> str:
        template = str(self.workspace.parent)
        roots = ["/tmp"] if Path(template).is_relative_to("/tmp") else ["/tmp", template]
        env = {
            "PATH": self.search_path,
            "HOME": f"{template}/outside",
            "LANG": "C.UTF-8",
            "PWD": str(self.workspace),
            "BASH_ENV": "/.probe/not_found.sh",
            "FUNCNEST": "16",
        }
        return json.dumps(
            {
                "pristine": "/.probe/pristine",
                "template": template,
                "roots": roots,
                "workspace": str(self.workspace),
                "env": env,
                "timeout": self.timeout,
            }
        )

    def _options(self) -> list[str]:
        """The mounts: a fresh root with /usr, /etc and the libraries read-only, the stand-ins over every
        program folder, the real bash and Python (and its library) at their own paths, the writable
        folders as memory-backed file systems, the root made read-only last."""
        kit = self._kit()
        bash = os.path.realpath(shutil.which("bash") or "/bin/bash")
        python = os.path.realpath(sys.executable)
        options = [
            "--unshare-all",
            "--die-with-parent",
            "--as-pid-1",
            "--new-session",
            "--cap-drop",
            "ALL",
            "--ro-bind",
            "/usr",
            "/usr",
            "--ro-bind",
            "/etc",
            "/etc",
        ]
        for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
            if os.path.islink(top):
                options += ["--symlink", os.readlink(top), top]
            elif os.path.isdir(top):
                options += ["--ro-bind", str(kit / "bin") if top in ("/bin", "/sbin") else top, top]
        for folder in self.covered:
            if not os.path.islink(folder):
                options += ["--ro-bind", str(kit / "bin"), folder]
        prefix = os.path.realpath(sys.base_prefix)
        if not any(Path(prefix).is_relative_to(p) for p in ("/usr", "/etc")):
            options += ["--ro-bind", prefix, prefix]
        template = str(self.workspace.parent)
        options += [
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--tmpfs",
            "/tmp",
            "--ro-bind",
            bash,
            "/.probe/bash",
            "--ro-bind",
            python,
            "/.probe/python",
            "--ro-bind",
            str(DRIVER),
            "/.probe/driver.py",
            "--ro-bind",
            str(kit / "standin"),
            "/.probe/standin",
            "--ro-bind",
            str(kit / "not_found.sh"),
            "/.probe/not_found.sh",
            "--ro-bind",
            template,
            "/.probe/pristine",
            "--tmpfs",
            "/.probe/log",
        ]
        if not Path(template).is_relative_to("/tmp"):
            options += ["--tmpfs", template]
        return [*options, "--remount-ro", "/dev", "--remount-ro", "/", "--chdir", "/"]

    def _kit(self) -> Path:
        """The stand-in script, one symlink to it per program name, the not-found handler (made once)."""
        kit = self.folder / "kit"
        if kit.is_dir():
            return kit
        (kit / "bin").mkdir(parents=True)
        (kit / "standin").write_text(_STANDIN)
        (kit / "standin").chmod(0o755)
        (kit / "not_found.sh").write_text(_NOT_FOUND)
        names = set(self._names)
        for folder in self.covered:
            with contextlib.suppress(OSError):
                names.update(os.listdir(folder))
        for name in sorted(names):
            if name and "/" not in name and name not in (".", ".."):
                os.symlink("/.probe/standin", kit / "bin" / name)
        return kit


def probe_problem(folder: Path) -> str | None:
    """Why the probe cannot run here (None: it can): bwrap missing, or refused by this machine."""
    try:
        with BashProbe(folder) as probe:
            run = probe.run("ls")
    except ProbeError as error:
        return str(error)
    if [s.name for s in run.started] != ["ls"]:
        return f"the stand-ins did not log a plain `ls` (got {run.started!r}, stderr {run.stderr!r})"
    return None
