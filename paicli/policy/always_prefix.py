"""What the "always" answer to a command covers: the program with its sub-command (`git commit`, `npm run
test`), a test runner or build tool by name (`pytest`), or only the exact text, for anything that destroys
work."""

from __future__ import annotations

import re

from paicli.policy.destructive import destructive_reason

# Commands whose first argument names what they do ("git commit", "npm test"): the unit of "always".
_SUBCOMMAND_TOOLS = {
    "git",
    "npm",
    "npx",
    "pnpm",
    "yarn",
    "bun",
    "cargo",
    "go",
    "pip",
    "pip3",
    "uv",
    "poetry",
    "docker",
    "podman",
    "kubectl",
    "make",
    "dotnet",
    "gradle",
    "mvn",
    "bundle",
    "rake",
    "brew",
    "apt",
    "apt-get",
    "conda",
    "terraform",
    "helm",
    "systemctl",
    "gh",
    "hatch",
    "tox",
    "nox",
}
_INTERPRETER = re.compile(r"(?:python|pypy)[0-9.]*|perl|ruby|node|php|deno|bash|sh|zsh|dash")
_SCRIPT_RUNNERS = {"npm", "pnpm", "yarn", "bun", "uv", "poetry", "hatch"}  # `run NAME`: the script is the unit
# Programs that overwrite, move or stop things whatever their arguments: "always" covers only the exact text.
_EXACT_ONLY = frozenset(
    {"mv", "dd", "chmod", "chown", "chgrp", "kill", "pkill", "killall", "sudo", "su", "doas", "mkfs", "crontab"}
)


def command_prefix(words: tuple[str, ...]) -> str | None:
    """What the "always" answer allows for this simple command, the narrowest useful scope: the program
    with its sub-command (`git commit`, `npm run test`), a test runner or build tool by name (`pytest`), or
    None when only the exact text is safe, as for anything that destroys work (`rm …`, `git clean …`:
    one yes to `rm -rf build` must not let every later `rm` through)."""
    name, args = words[0], words[1:]
    if name in _EXACT_ONLY or destructive_reason(words):
        return None
    operands = [a for a in args if not a.startswith("-")]
    if name in _SUBCOMMAND_TOOLS:
        if operands[:1] in (["run"], ["run-script"], ["exec"]) and name in _SCRIPT_RUNNERS and len(operands) > 1:
            return f"{name} {operands[0]} {operands[1]}"  # `npm run test`, not every script
        return f"{name} {operands[0]}" if operands else name
    if is_interpreter_name(name):
        if len(args) >= 2 and args[0] == "-m":
            return f"{name} -m {args[1]}"
        if args and not args[0].startswith("-"):
            return f"{name} {args[0]}"
        return None  # `python -c CODE`, a bare REPL: the code is the command
    return name


def is_interpreter_name(name: str) -> bool:
    """Whether `name` is an interpreter (python, perl, node, a shell, ...): it runs the code it is given, and
    its first argument (a script, `-m module`) is the unit of "always"."""
    return bool(_INTERPRETER.fullmatch(name))
