"""What paicli knows about programs that run other programs or code on their behalf.

`inner(words)` says what a simple command runs besides itself: the command a wrapper starts (`env`,
`nohup`, `timeout 5`, `xargs`, `find -exec`, `busybox`, ...) and the shell code a program is handed
(`bash -c CODE`, `eval`, `trap`, `watch`, `ssh`, `git -c alias.x='!CODE'`, ...). `stdin_language` says
whether a command reads its program from stdin. The visitors walk what these return as commands of
their own, so a deny rule, the denylist and the classifier all see `rm` in `find . -exec rm {} +`.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from paicli.shell.syntax import Literal, Word

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "ash", "yash", "posh", "rbash", "csh", "tcsh"})
_INTERPRETER = re.compile(
    r"(?:python|pypy)[0-9.]*|perl[0-9.]*|ruby[0-9.]*|node(?:js)?|php[0-9.]*|bun|deno|lua[0-9.]*|luajit|tclsh[0-9.]*"
    r"|Rscript|R|pwsh|osascript|jshell|groovy|scala|julia|awk|gawk|mawk|nawk"
)
_SYSTEM_BIN = frozenset({"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin"})

# Wrappers: name -> (options that take a value, positional parameters before the command).
_WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    "env": (frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string", "-a", "--argv0"}), 0),
    "nohup": (frozenset(), 0),
    "time": (frozenset({"-f", "--format", "-o", "--output"}), 0),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "ionice": (frozenset({"-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "--pgid", "-u", "--uid"}), 0),
    "timeout": (frozenset({"-s", "--signal", "-k", "--kill-after"}), 1),
    "stdbuf": (frozenset({"-i", "--input", "-o", "--output", "-e", "--error"}), 0),
    "setsid": (frozenset(), 0),
    "command": (frozenset(), 0),
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
    "proot": (frozenset({"-r", "-b", "-w", "-q"}), 0),
    "torsocks": (frozenset(), 0),
    "proxychains": (frozenset({"-f"}), 0),
}
# Variables whose value a program runs as a command line, or bash expands as code (prompts).
CODE_VARIABLES = frozenset({
    "PAGER", "GIT_PAGER", "MANPAGER", "SYSTEMD_PAGER", "EDITOR", "VISUAL", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR",
    "GIT_EXTERNAL_DIFF", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS",
    "GIT_PROXY_COMMAND", "LESSOPEN", "LESSCLOSE", "PS0", "PS1", "PS2", "PS4", "PROMPT_COMMAND", "BROWSER", "FCEDIT",
})  # fmt: skip
# Variables that make a program load what they name: a startup file, programs, a configuration, a library.
LOADER_VARIABLES = frozenset({
    "BASH_ENV", "ENV", "GIT_EXEC_PATH", "GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_TEMPLATE_DIR", "LD_PRELOAD", "LD_AUDIT",
})  # fmt: skip
_LOADER_PREFIXES = ("BASH_FUNC_", "GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_")
_ASSIGNING = frozenset({"env", "export", "declare", "typeset", "local", "readonly"})
# Options of a wrapper that make it print instead of run (`command -v rm` only looks `rm` up).
_LOOKUP_ONLY = {"command": {"-v", "-V"}}
_FIND_EXEC = ("-exec", "-execdir", "-ok", "-okdir")
_SSH_VALUE_OPTIONS = frozenset("BbcDEeFIiJLlmOoPpQRSWw")


@dataclass(frozen=True)
class Inner:
    """Something a command runs on its behalf: a command (`words`) or a piece of shell code (`code`)."""

    via: str  # "env", "xargs", "find -exec", "bash -c", "eval", ...
    words: tuple[Word, ...] = ()
    code: str | None = None
    dynamic: bool = False  # part of the code is only known when it runs
    appended: bool = False  # more arguments come from elsewhere when it runs (xargs, find -exec ... +)
    human: str | None = None  # why a person must look at it even in yolo (code or programs set by a variable)


def basename(text: str) -> str:
    return text.rsplit("/", 1)[-1] if text not in ("/", "") else text


def program_name(word: Word) -> str:
    """`/usr/bin/rm` → `rm` (a system program); `./rm` and `bin/rm` stay as written (a project file)."""
    folder, _, name = word.text.rpartition("/")
    return name if folder in _SYSTEM_BIN and name else word.text


def is_shell(name: str) -> bool:
    return basename(name) in SHELLS


def is_interpreter(name: str) -> bool:
    name = basename(name)
    return name in SHELLS or bool(_INTERPRETER.fullmatch(name))


def assigned(name: str, value: Word | None) -> Inner | None:
    """What setting variable `name` to `value` makes programs run: `GIT_EXTERNAL_DIFF='cmd'`, `PS4='$(cmd)'`,
    `BASH_ENV=file`, `LD_PRELOAD=lib`, `BASH_FUNC_ls%%='() { cmd; }'`. None for an ordinary variable."""
    text = value.text if value is not None else ""
    dynamic = value is not None and not value.static
    why = f"setting {name} makes programs run what it names"
    if name in CODE_VARIABLES or name.startswith("GIT_CONFIG_VALUE_"):
        return Inner(f"${name}", code=text.lstrip("|"), dynamic=dynamic, human=why)
    if name.startswith("BASH_FUNC_"):
        return Inner(f"${name}", code="exported_function" + text, dynamic=dynamic, human=why)
    if name in LOADER_VARIABLES or name.startswith(_LOADER_PREFIXES):
        return Inner(f"${name}", human=why)
    return None


def inner(words: tuple[Word, ...]) -> list[Inner]:
    """What `words` (a simple command, name first) runs on its behalf, in the order it would."""
    if not words:
        return []
    name = basename(words[0].text)
    args = words[1:]
    if name in _ASSIGNING:
        settings = [found for found in map(_assigned_in, args) if found is not None]
        return settings + (_wrapped(name, args) if name == "env" else [])
    if name in SHELLS:
        return _shell_code(name, args)
    if name == "eval" and args:
        return [_code("eval", args)]
    if name == "trap":
        rest = [w for w in args if not w.text.startswith("-")]
        return [_code("trap", rest[:1])] if len(rest) >= 2 else []
    if name in ("su", "script") or (name == "flock" and any(w.text in ("-c", "--command") for w in args)):
        return [_code(f"{name} -c", [v]) for o, v in itertools.pairwise(args) if o.text in ("-c", "--command")]
    if name == "watch":
        command = _after_options(args, frozenset({"-n", "--interval", "-d", "--differences", "-q", "--equexit"}))
        return [_code("watch", command)] if command else []
    if name == "ssh":
        return _ssh(args)
    if name == "alias":
        return [_code("alias", [_value_word(w)]) for w in args if "=" in w.text]
    if name == "busybox" and args:
        return [Inner("busybox", args)]
    if name == "find":
        return _find_exec(args)
    if name == "git":
        return _git_aliases(args)
    if name in _WRAPPERS:
        return _wrapped(name, args)
    return []


def stdin_language(words: tuple[Word, ...]) -> str | None:
    """The language a command reads its program in from stdin (`bash`, `python3 -`, `sh -s`), or None."""
    if not words:
        return None
    name = basename(words[0].text)
    if not is_interpreter(name):
        return None
    for word in words[1:]:
        text = word.text
        if text in ("-", "-s", "--"):
            return name
        if name in SHELLS and text.startswith("-") and not text.startswith("--") and "c" in text[1:]:
            return None
        if text in ("-c", "-e", "-E", "--eval", "-m", "-f", "--file", "-r", "--command") or not text.startswith("-"):
            return None
    return name


def _shell_code(name: str, args: tuple[Word, ...]) -> list[Inner]:
    command = False
    for index, word in enumerate(args):
        text = word.text
        if text == "--":
            rest = args[index + 1 :]
            return [_code(f"{name} -c", rest[:1])] if command and rest else []
        if text in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            continue
        if index and args[index - 1].text in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            continue
        if text.startswith(("-", "+")) and len(text) > 1:
            command = command or (not text.startswith("--") and "c" in text[1:])
            continue
        return [_code(f"{name} -c", [word])] if command else []
    return []


def _code(via: str, words: list[Word] | tuple[Word, ...]) -> Inner:
    text = " ".join(w.text for w in words)
    return Inner(via, code=text, dynamic=not all(w.static for w in words))


def _assigned_in(word: Word) -> Inner | None:
    """`NAME=VALUE` given to `env`, `export`, `declare`, ... as one word."""
    name, equals, _ = word.text.partition("=")
    if not equals or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_%]*", name):
        return None
    return assigned(name, _value_word(word))


def script_file(words: tuple[Word, ...]) -> Word | None:
    """The file a command runs as a script: `sh FILE`, `bash -x FILE`, `source FILE`, `. FILE`, `./FILE`."""
    if not words:
        return None
    name = basename(words[0].text)
    if "/" in words[0].text and name not in SHELLS:
        return words[0]
    if name in ("source", "."):
        return words[1] if len(words) > 1 else None
    if name in SHELLS and not _shell_code(name, words[1:]):
        for word in words[1:]:
            if not word.text.startswith(("-", "+")):
                return word
    return None


def _value_word(word: Word) -> Word:
    """The value of `name=value` in one word (`alias x='rm -rf /'`)."""
    text = word.text.split("=", 1)[1]
    return Word(text, (Literal(text, quoted=True),) if word.static else word.parts)


def _after_options(args: tuple[Word, ...], valued: frozenset[str], positional: int = 0) -> tuple[Word, ...]:
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


def _wrapped(name: str, args: tuple[Word, ...]) -> list[Inner]:
    valued, positional = _WRAPPERS[name]
    if any(w.text in _LOOKUP_ONLY.get(name, ()) for w in args):
        return []
    found: list[Inner] = []
    if name == "env":
        found += [Inner("env -S", code=w.text.split("=", 1)[-1]) for w in _split_strings(args)]
        while args and re.fullmatch(r"-[iv0]+|--ignore-environment|--null|--debug", args[0].text):
            args = args[1:]
    command = _after_options(args, valued)
    while name == "env" and command and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", command[0].text, re.DOTALL):
        command = command[1:]
    if name == "timeout" and command and re.fullmatch(r"[0-9.]+[smhd]?", command[0].text):
        command = command[1:]
    elif positional and name != "timeout":
        command = command[positional:]
    if name == "xargs" and not command:
        command = (Word("echo", (Literal("echo", quoted=False),)),)
    if command:
        found.append(Inner(name, command, appended=name == "xargs"))
    return found


def _split_strings(args: tuple[Word, ...]) -> list[Word]:
    out = []
    for index, word in enumerate(args):
        if word.text.startswith(("--split-string=", "-S")) and word.text not in ("-S", "--split-string"):
            out.append(Word(word.text, word.parts))
        elif word.text in ("-S", "--split-string") and index + 1 < len(args):
            out.append(args[index + 1])
    return out


def _find_exec(args: tuple[Word, ...]) -> list[Inner]:
    found = []
    index = 0
    while index < len(args):
        if args[index].text in _FIND_EXEC:
            end = index + 1
            while end < len(args) and args[end].text not in (";", "+"):
                end += 1
            command = args[index + 1 : end]
            if command:
                plus = end < len(args) and args[end].text == "+"
                found.append(Inner(f"find {args[index].text}", command, appended=plus))
            index = end
        index += 1
    return found


def _git_aliases(args: tuple[Word, ...]) -> list[Inner]:
    """`git -c alias.x='!CODE' x`: a `!` alias is shell code."""
    found = []
    for option, value in itertools.pairwise(args):
        if option.text == "-c" and value.text.lower().startswith("alias.") and "=" in value.text:
            code = value.text.split("=", 1)[1]
            if code.startswith("!"):
                found.append(Inner("git alias", code=code[1:], dynamic=not value.static))
    return found


def _ssh(args: tuple[Word, ...]) -> list[Inner]:
    index = 0
    while index < len(args) and args[index].text.startswith("-"):
        text = args[index].text
        index += 2 if len(text) == 2 and text[1] in _SSH_VALUE_OPTIONS else 1
    command = args[index + 1 :]
    return [_code("ssh", command)] if command else []
