"""Bash's builtins and keywords: the names bash runs itself, never from PATH, and which of them run code."""

from __future__ import annotations

# Bash's builtins and keywords (`compgen -b`, `compgen -k`): names bash runs itself, never from PATH.
BASH_BUILTINS = frozenset(
    {
        ".",
        ":",
        "[",
        "alias",
        "bg",
        "bind",
        "break",
        "builtin",
        "caller",
        "cd",
        "command",
        "compgen",
        "complete",
        "compopt",
        "continue",
        "declare",
        "dirs",
        "disown",
        "echo",
        "enable",
        "eval",
        "exec",
        "exit",
        "export",
        "false",
        "fc",
        "fg",
        "getopts",
        "hash",
        "help",
        "history",
        "jobs",
        "kill",
        "let",
        "local",
        "logout",
        "mapfile",
        "popd",
        "printf",
        "pushd",
        "pwd",
        "read",
        "readarray",
        "readonly",
        "return",
        "set",
        "shift",
        "shopt",
        "source",
        "suspend",
        "test",
        "times",
        "trap",
        "true",
        "type",
        "typeset",
        "ulimit",
        "umask",
        "unalias",
        "unset",
        "wait",
        "time",
        "coproc",
        "select",
        "function",
    }
)
# Builtins that run code or programs: a command line, a file of code, a callback, a loaded library.
CODE_BUILTINS = frozenset(
    {
        ".",
        "source",
        "eval",
        "exec",
        "command",
        "builtin",
        "trap",
        "fc",
        "bind",
        "complete",
        "compgen",
        "mapfile",
        "readarray",
        "enable",
        "coproc",
    }
)


def starts_program(name: str) -> bool:
    """Whether a simple command named `name` (as `paicli.shell.programs.program_name` gives it) starts a
    program or runs code: anything but a builtin that only works on the shell's own state (`echo`, `cd`,
    `export`, ...)."""
    return name not in BASH_BUILTINS or name in CODE_BUILTINS
