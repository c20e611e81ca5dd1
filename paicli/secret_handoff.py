"""Keep the API key (and every secret-looking variable) out of paicli's own process environment.

Any process that may read `/proc/PID/environ` of paicli (the commands it runs can: same user, and
root in any case) sees the environment paicli was *started* with; removing a variable from
`os.environ` later does not change that. So at start-up, when the environment holds secrets, paicli
writes them into a pipe, and replaces itself (execve, same PID, same terminal) with the same
interpreter and arguments, minus those variables, plus PAICLI_KEY_FD naming the pipe's read end. The
new image reads the pipe once and closes it: the API key variables go to the settings loader and
nowhere else; the other secrets (GITHUB_TOKEN, ...) go back into `os.environ`, which lives in process
memory and is not what `/proc/PID/environ` shows, so paicli's own helpers keep them (commands never
get them: see execute_command.child_environment).

On Linux the process also becomes non-dumpable (PR_SET_DUMPABLE 0): processes of the same user that
are not root can no longer ptrace it or read its memory. Root still can; the sandbox is what stops
that.
"""

from __future__ import annotations

import json
import os
import stat
import sys

TYPE_CHECKING = False  # not typing's: `restart_if_secrets` runs before anything else is imported (mypy: true)
if TYPE_CHECKING:
    from collections.abc import Collection, Mapping, MutableMapping, Sequence

HANDOFF_VARIABLE = "PAICLI_KEY_FD"
SECRET_NAME_PARTS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL")
_PIPE_SIZE = 1 << 20  # what Linux lets an unprivileged process ask for (fs.pipe-max-size)
_PR_SET_DUMPABLE = 4


class HandoffError(Exception):
    """The secrets could not be moved out of the environment; paicli stops rather than keep them there."""


def is_secret_name(name: str) -> bool:
    return any(part in name.upper() for part in SECRET_NAME_PARTS)


def secrets_in(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables of `environ` whose names look secret (they are handed over, not inherited)."""
    return {name: value for name, value in environ.items() if is_secret_name(name)}


def secure_start(key_variables: Collection[str]) -> dict[str, str]:
    """Called once by the program's entry point. Either does not return (the process re-executes
    itself without its secret variables) or returns the API key variables (`key_variables`: PAICLI_API_KEY
    and each provider's own, paicli/llm/providers.py) that were handed over."""
    if os.name != "posix":  # no /proc to read, and no fd inheritance the same way: nothing to do
        return {}
    if HANDOFF_VARIABLE in os.environ:
        handed = receive(os.environ, key_variables)
        _make_undumpable()
        return handed
    restart_if_secrets()  # returns only when there is no secret to move
    _make_undumpable()
    return {}


def restart_if_secrets() -> None:
    """The first half of `secure_start`, for the program's entry point before anything else is imported:
    when the environment holds secrets (and they were not handed over yet), restart without them now, so
    that the discarded first process costs an interpreter's start and no more. Returns when there is
    nothing to do; the second process's `secure_start` then receives them."""
    if os.name != "posix" or HANDOFF_VARIABLE in os.environ:
        return
    secrets = secrets_in(os.environ)
    if secrets:
        restart_without(secrets, os.environ, sys.executable, sys.orig_argv)
        raise AssertionError("unreachable: execve returned")  # pragma: no cover


def restart_without(
    secrets: Mapping[str, str], environ: Mapping[str, str], executable: str, argv: Sequence[str]
) -> None:
    """Write `secrets` into a pipe and execve `executable` with `argv[1:]`, without them in the environment."""
    if not executable or not argv:
        raise HandoffError("cannot restart paicli without its secret environment variables (no interpreter path)")
    env = handoff_environment(secrets, environ)
    read_end = int(env[HANDOFF_VARIABLE])
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(executable, [executable, *argv[1:]], env)
    except OSError as error:
        os.close(read_end)
        raise HandoffError(f"cannot restart paicli without its secret environment variables: {error}") from None


def handoff_environment(secrets: Mapping[str, str], environ: Mapping[str, str]) -> dict[str, str]:
    """`environ` without `secrets`, plus HANDOFF_VARIABLE naming an inheritable pipe that holds them (what
    the next image of paicli reads with `receive`)."""
    read_end, write_end = os.pipe()
    try:
        _write_all(write_end, json.dumps(dict(secrets)).encode())
    except BaseException:
        os.close(read_end)
        raise
    finally:
        os.close(write_end)
    os.set_inheritable(read_end, True)
    env = {name: value for name, value in environ.items() if name not in secrets}
    env[HANDOFF_VARIABLE] = str(read_end)
    return env


def receive(environ: MutableMapping[str, str], key_variables: Collection[str]) -> dict[str, str]:
    """Read the secrets from the inherited pipe (once), close it, put the non-key ones back into
    `environ` and return the key ones."""
    raw_fd = environ.pop(HANDOFF_VARIABLE, "")
    try:
        fd = int(raw_fd)
    except ValueError:
        raise HandoffError(f"{HANDOFF_VARIABLE} is not a file descriptor number: {raw_fd!r}") from None
    try:
        is_pipe = fd >= 3 and stat.S_ISFIFO(os.fstat(fd).st_mode)
    except OSError:
        is_pipe = False
    if not is_pipe:  # not ours: left alone, not closed
        raise HandoffError(f"{HANDOFF_VARIABLE}={fd} is not the pipe paicli hands its secrets over")
    chunks = []
    try:
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
    except OSError as error:
        raise HandoffError(f"cannot read the secrets handed over on fd {fd}: {error.strerror}") from None
    finally:
        os.close(fd)
    try:
        secrets = json.loads(b"".join(chunks))
    except ValueError:
        raise HandoffError("the secrets handed over at start-up are not readable") from None
    if not isinstance(secrets, dict) or not all(isinstance(v, str) for v in secrets.values()):
        raise HandoffError("the secrets handed over at start-up are not readable")
    keys = {name: value for name, value in secrets.items() if name in key_variables}
    environ.update({name: value for name, value in secrets.items() if name not in key_variables})
    return keys


def _write_all(fd: int, payload: bytes) -> None:
    """The whole payload must fit in the pipe: nobody reads it before the exec."""
    if len(payload) > 60_000 and sys.platform == "linux":
        import contextlib  # here, not at the top: see TYPE_CHECKING
        import fcntl

        with contextlib.suppress(OSError):
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _PIPE_SIZE)
    os.set_blocking(fd, False)
    view = memoryview(payload)
    try:
        while view:
            view = view[os.write(fd, view) :]
    except BlockingIOError:
        raise HandoffError(
            f"the secret-looking environment variables hold {len(payload)} bytes, more than paicli can hand over"
        ) from None


def _make_undumpable() -> None:
    if sys.platform != "linux":
        return
    import contextlib
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
