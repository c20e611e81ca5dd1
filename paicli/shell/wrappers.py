"""Wrappers: programs that run the command given after their own options (`env`, `nohup`, `timeout 5`,
`nice -n 5`, `xargs`, `chronic`, ...), and what that command is.
"""

from __future__ import annotations

import re

from paicli.shell.syntax import Inner, Literal, Word, filled_in

# Wrappers: name -> (options that take a value, positional parameters before the command).
WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    "env": (frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string", "-a", "--argv0"}), 0),
    "nohup": (frozenset(), 0),
    "time": (frozenset({"-f", "--format", "-o", "--output"}), 0),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "ionice": (frozenset({"-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "--pgid", "-u", "--uid"}), 0),
    "timeout": (frozenset({"-s", "--signal", "-k", "--kill-after"}), 1),
    "stdbuf": (frozenset({"-i", "--input", "-o", "--output", "-e", "--error"}), 0),
    "setsid": (frozenset(), 0),
    "command": (frozenset(), 0),
    "coproc": (frozenset(), 0),
    "builtin": (frozenset(), 0),
    "exec": (frozenset({"-a"}), 0),
    "chroot": (frozenset({"--userspec", "--groups"}), 1),
    "unbuffer": (frozenset(), 0),
    "taskset": (frozenset(), 1),
    "chrt": (frozenset(), 1),
    "flock": (frozenset({"-w", "--timeout", "-E", "--conflict-exit-code"}), 1),
    "strace": (frozenset({"-o", "-e", "-p", "-s", "-u", "-E", "-I", "-b", "-a", "-O", "-S", "-X", "-P"}), 0),
    "ltrace": (frozenset({"-o", "-e", "-p", "-s", "-u", "-a", "-n", "-l", "-x", "-L"}), 0),
    "valgrind": (frozenset(), 0),
    "catchsegv": (frozenset(), 0),
    "fakeroot": (frozenset({"-l", "--lib", "--faked", "-s", "-i"}), 0),
    "setpriv": (frozenset({"--reuid", "--regid", "--groups", "--inh-caps", "--ambient-caps", "--bounding-set"}), 0),
    "runuser": (frozenset({"-u", "--user", "-g", "--group", "-G"}), 0),
    "sudo": (
        frozenset(
            {"-u", "--user", "-g", "--group", "-h", "--host", "-p", "--prompt", "-C", "-D", "-r", "-t", "-U", "-T"}
        ),
        0,
    ),
    "doas": (frozenset({"-u", "-C"}), 0),
    "xargs": (
        frozenset(
            {
                "-I",
                "-i",
                "-L",
                "-l",
                "-n",
                "--max-args",
                "-P",
                "--max-procs",
                "-s",
                "--max-chars",
                "-d",
                "--delimiter",
                "-E",
                "-e",
                "--eof",
                "-a",
                "--arg-file",
                "--process-slot-var",
            }
        ),
        0,
    ),
    "dbus-run-session": (frozenset({"--config-file", "--dbus-daemon"}), 0),
    "systemd-run": (
        frozenset(
            {
                "-p",
                "--property",
                "-u",
                "--unit",
                "-M",
                "--machine",
                "-E",
                "--setenv",
                "--working-directory",
                "--uid",
                "--gid",
                "--nice",
                "-H",
                "--host",
            }
        ),
        0,
    ),
    "nsenter": (frozenset({"-t", "--target", "-S", "--setuid", "-G", "--setgid", "-w", "--wd", "-r", "--root"}), 0),
    "unshare": (
        frozenset({"--map-user", "--map-group", "-S", "--setuid", "-G", "--setgid", "-R", "--root", "-w", "--wd"}),
        0,
    ),
    "firejail": (frozenset(), 0),
    "chronic": (frozenset(), 0),
    "eatmydata": (frozenset(), 0),
    "nocache": (frozenset(), 0),
    "entr": (frozenset(), 0),
    "dbus-launch": (frozenset(), 0),
    "ssh-agent": (frozenset({"-a", "-E", "-t", "-P", "-O"}), 0),
    "xvfb-run": (
        frozenset(
            {
                "-n",
                "--server-num",
                "-s",
                "--server-args",
                "-f",
                "--auth-file",
                "-e",
                "--error-file",
                "-p",
                "--xauth-protocol",
                "-w",
                "--wait",
            }
        ),
        0,
    ),
    "cpulimit": (frozenset({"-l", "--limit", "-p", "--pid", "-e", "--exe"}), 0),
    "trickle": (frozenset({"-d", "-u", "-w", "-t", "-l", "-n"}), 0),
    "faketime": (frozenset({"-m", "-f"}), 1),
    "proxychains4": (frozenset({"-f"}), 0),
    "torify": (frozenset(), 0),
    "tsocks": (frozenset(), 0),
    "sudo-rs": (frozenset({"-u", "--user", "-g", "--group"}), 0),
    "proot": (frozenset({"-r", "-b", "-w", "-q"}), 0),
    "torsocks": (frozenset(), 0),
    "proxychains": (frozenset({"-f"}), 0),
}
# Option letters of a wrapper that make it print instead of run (`command -v rm`, `command -pV rm`).
_LOOKUP_ONLY = {"command": "vV"}


def after_options(args: tuple[Word, ...], valued: frozenset[str], positional: int = 0) -> tuple[Word, ...]:
    """The command a wrapper runs: its arguments after its options and `positional` parameters."""
    index = 0
    while index < len(args):
        text = args[index].text
        if text == "--":
            index += 1
            break
        if not text.startswith("-") or text == "-":
            break
        index += 2 if text in valued else 1
    index += positional
    return args[index:]


def wrapped(name: str, args: tuple[Word, ...]) -> list[Inner]:
    valued, positional = WRAPPERS[name]
    if _looks_up_only(name, args, valued):
        return []
    found: list[Inner] = []
    if name == "env":
        found += [Inner("env -S", code=w.text.split("=", 1)[-1]) for w in _split_strings(args)]
        while args and re.fullmatch(r"-[iv0]+|--ignore-environment|--null|--debug", args[0].text):
            args = args[1:]
    command = after_options(args, valued)
    while name == "env" and command and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", command[0].text, re.DOTALL):
        command = command[1:]
    if name == "timeout" and command and re.fullmatch(r"[0-9.]+[smhd]?", command[0].text):
        command = command[1:]
    elif positional and name != "timeout":
        command = command[positional:]
    if name == "xargs" and not command:
        command = (Word("echo", (Literal("echo", quoted=False),)),)
    if name == "xargs" and (replace := _replace_string(args, valued)):
        command = tuple(filled_in(w, replace) for w in command)
    if command:
        found.append(Inner(name, command, appended=name == "xargs"))
    return found


def _looks_up_only(name: str, args: tuple[Word, ...], valued: frozenset[str]) -> bool:
    """Whether an option before the command makes the wrapper only look it up (`command ls -v` runs ls)."""
    letters = _LOOKUP_ONLY.get(name, "")
    options = args[: len(args) - len(after_options(args, valued))]
    return any(
        w.text.startswith("-") and not w.text.startswith("--") and set(w.text[1:]) & set(letters) for w in options
    )


def _replace_string(args: tuple[Word, ...], valued: frozenset[str]) -> str | None:
    """The text xargs replaces with each input line (`-I R`, `-IR`, `--replace[=R]`, `-i[R]`)."""
    skip = False
    for index, word in enumerate(args):
        text = word.text
        if skip:
            skip = False
            continue
        if text == "-I" and index + 1 < len(args):
            return args[index + 1].text or None
        if text.startswith("-I") and len(text) > 2:
            return text[2:]
        if text in ("-i", "--replace"):
            return "{}"
        if text.startswith(("-i", "--replace=")):
            return text.split("=", 1)[1] if text.startswith("--") else text[2:]
        if not text.startswith("-"):
            return None
        skip = text in valued
    return None


def _split_strings(args: tuple[Word, ...]) -> list[Word]:
    out = []
    for index, word in enumerate(args):
        if word.text.startswith(("--split-string=", "-S")) and word.text not in ("-S", "--split-string"):
            out.append(Word(word.text, word.parts))
        elif word.text in ("-S", "--split-string") and index + 1 < len(args):
            out.append(args[index + 1])
    return out


# Project runners: program -> the words before the command it runs (`uv run CMD`, `npx CMD`).
_RUNNERS: dict[str, tuple[str, ...]] = {
    "uv": ("run",),
    "poetry": ("run",),
    "pipenv": ("run",),
    "pdm": ("run",),
    "hatch": ("run",),
    "rye": ("run",),
    "pixi": ("run",),
    "conda": ("run",),
    "mamba": ("run",),
    "micromamba": ("run",),
    "bundle": ("exec",),
    "npm": ("exec",),
    "pnpm": ("exec",),
    "yarn": ("exec",),
    "npx": (),
    "bunx": (),
    "pnpx": (),
    "uvx": (),
    "direnv": ("exec", "*"),
    "doppler": ("run",),
    "op": ("run",),
    "dotenvx": ("run",),
    "env-cmd": (),
}


def runner_commands(words: tuple[Word, ...]) -> list[tuple[Word, ...]]:
    """The commands a project runner may start (`uv run --python 3.12 CMD ARGS`). Their options are many and
    change often, so a word after an option may be its value or the command: each such word is taken as a
    possible command, up to the first word that can only be the command. For the hard denylist, which
    would rather refuse `uv run --frozen pytest -k mkfs` than miss `uv run --python 3.12 mkfs.ext4 img`."""
    if not words:
        return []
    prefix = _RUNNERS.get(words[0].text.rsplit("/", 1)[-1])
    if prefix is None:
        return []
    rest = words[1:]
    for expected in prefix:
        if not rest or (expected != "*" and rest[0].text != expected):
            return []
        rest = rest[1:]
    found: list[tuple[Word, ...]] = []
    after_option = False
    for index, word in enumerate(rest):
        text = word.text
        if text == "--":
            return [*found, rest[index + 1 :]] if index + 1 < len(rest) else found
        if text.startswith("-"):
            after_option = "=" not in text
            continue
        found.append(rest[index:])
        if not after_option:
            break
        after_option = False
    return found
