"""Options and arguments through which a program runs a command line: `tar --to-command=CMD`, `rsync -e
CMD`, `sort --compress-program=CMD`, `ssh -o ProxyCommand=CMD`, `git rebase -x CMD`, `git config
alias.x '!CMD'`, `socat - EXEC:CMD`, `nc -c CMD`, `sed 'e CMD'`, ...

`option_code(words)` returns what they run as `Inner`s, which the walk visits like `bash -c` code: the
denylist sees `mkfs` in `tar -I 'mkfs.ext4 -F img' -cf x f`, and code only known when it runs is OPAQUE.
Where such a program reads its options, a word only known when it runs could be one of them (`find . $X`,
`tar "$OPT" -cf x f`): a human must look (`Inner.human`). So must programs that run commands paicli cannot
follow (a terminal multiplexer's session, GNU parallel's input, a crontab, editor commands).
"""

from __future__ import annotations

import re

from paicli.shell.git_options import git_code
from paicli.shell.option_values import code_of, could_be_option, option_values
from paicli.shell.programs import basename
from paicli.shell.sed import sed_code
from paicli.shell.syntax import Inner, Literal, Word, word_suffix

# program -> options whose value is a command line (or a program) it runs.
_COMMAND_OPTIONS: dict[str, frozenset[str]] = {
    "tar": frozenset(
        {"--to-command", "--use-compress-program", "-I", "--rsh-command", "--info-script", "-F", "--new-volume-script"}
    ),
    "rsync": frozenset({"-e", "--rsh", "--rsync-path"}),
    "scp": frozenset({"-S"}),
    "sftp": frozenset({"-S", "-D"}),
    "sort": frozenset({"--compress-program"}),
    "man": frozenset({"-P", "--pager"}),
    "zip": frozenset({"-TT", "--unzip-command"}),
    "nc": frozenset({"-e", "-c"}),
    "netcat": frozenset({"-e", "-c"}),
    "ncat": frozenset({"-e", "-c", "--exec", "--sh-exec"}),
    "nix-shell": frozenset({"--run", "--command"}),
    "sg": frozenset({"-c"}),
    "npx": frozenset({"-c", "--call"}),
    "npm": frozenset({"-c", "--call"}),
}
# Options whose value is a program only when attached (`man -Hfirefox`, `git grep -Oless`).
_ATTACHED_ONLY = {"man": frozenset({"-H", "--html"})}
_SSH_OPTION_CODE = frozenset({"proxycommand", "localcommand", "knownhostscommand", "remotecommand"})
_HUMAN = {
    "parallel": "GNU parallel builds the commands it runs from its input",
    "sem": "GNU parallel builds the commands it runs from its input",
    "crontab": "crontab installs commands that run later, where paicli cannot check them",
    "tmux": "tmux runs commands in a session paicli cannot follow",
    "screen": "screen runs commands in a session paicli cannot follow",
    "byobu": "byobu runs commands in a session paicli cannot follow",
}
_LISTING = {
    "crontab": {"-l"},
    "tmux": {"-V", "ls", "list-sessions", "has-session", "has"},
    "screen": {"-ls", "-list", "-v"},
    "parallel": {"--version", "--help"},
}
_EDITORS = frozenset({"vi", "vim", "nvim", "ex", "view", "vimdiff", "gvim", "rvim", "rview", "evim", "nex"})
_EDITOR_COMMANDS = ("-c", "--cmd", "-S", "-s", "-u", "--init")
_FIND_VALUED = frozenset(
    {
        "-name",
        "-iname",
        "-path",
        "-ipath",
        "-wholename",
        "-iwholename",
        "-regex",
        "-iregex",
        "-lname",
        "-ilname",
        "-type",
        "-xtype",
        "-size",
        "-mtime",
        "-mmin",
        "-atime",
        "-amin",
        "-ctime",
        "-cmin",
        "-newer",
        "-anewer",
        "-cnewer",
        "-perm",
        "-user",
        "-group",
        "-uid",
        "-gid",
        "-links",
        "-inum",
        "-samefile",
        "-maxdepth",
        "-mindepth",
        "-printf",
        "-fstype",
        "-used",
        "-context",
        "-regextype",
        "-newermt",
    }
)
# Options of theirs that take the next word as a plain value: short letters (last of a bundle), long names.
_VALUED: dict[str, tuple[str, frozenset[str]]] = {
    "tar": ("fCTXbgHKLNV", frozenset({"--file", "--directory", "--files-from", "--exclude-from", "--exclude"})),
    "sort": ("ktoST", frozenset({"--key", "--field-separator", "--output", "--buffer-size", "--temporary-directory"})),
    "make": ("Cjlo", frozenset({"--directory", "--jobs", "--load-average", "--old-file"})),
    "rsync": ("", frozenset({"--exclude", "--include", "--filter", "--chmod", "--timeout", "--bwlimit"})),
    "man": ("SMLms", frozenset({"--sections", "--manpath", "--locale"})),
}
# Programs whose options run commands: a word only known when it runs may be such an option.
_OPTIONS_RUN_COMMANDS = frozenset(_COMMAND_OPTIONS) | {"ssh", "find", "sed", "make", "less", "more", "socat"}
_GNU_NAMES = {"gsed": "sed", "gtar": "tar", "bsdtar": "tar", "gsort": "sort", "gfind": "find", "gmake": "make"}
_STDIN_FILES = ("-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0")


def option_code(words: tuple[Word, ...]) -> list[Inner]:
    """What `words` (a simple command, name first) runs through its options and arguments."""
    if not words or not words[0].static:
        return []
    name = basename(words[0].text)
    name = _GNU_NAMES.get(name, name)
    args = words[1:]
    found: list[Inner] = []
    if name in _HUMAN and not _LISTING.get(name, set()) & {w.text for w in args[:1]}:
        return [Inner(name, human=_HUMAN[name])]
    if name in _EDITORS and any(w.text.startswith(_EDITOR_COMMANDS) or w.text.startswith("+") for w in args):
        return [Inner(name, human=f"{name} runs the editor commands it is given, which can run shell commands")]
    if name in ("less", "more") and any(w.text.startswith("+") and ("!" in w.text or "|" in w.text) for w in args):
        return [Inner(name, human=f"{name} runs the commands given with +, which can run shell commands")]
    if name in _OPTIONS_RUN_COMMANDS and (why := _dynamic_option(name, args)):
        found.append(Inner(name, human=why))
    if name in _COMMAND_OPTIONS:
        found += [code_of(f"{name} {option}", value) for option, value in option_values(args, _COMMAND_OPTIONS[name])]
    if name in _ATTACHED_ONLY:
        found += [code_of(f"{name} {o}", v) for o, v in option_values(args, _ATTACHED_ONLY[name], attached_only=True)]
    if name == "tar":
        found += _tar(args)
    elif name in ("ssh", "scp", "sftp"):
        found += [code_of(f"{name} -o", v) for v in _ssh_options(args)]
    elif name == "socat":
        found += [code_of("socat", part) for w in args if _socat_runs(w.text) for part in _socat_command(w)]
    elif name == "ncat" and any(w.text.startswith("--lua-exec") for w in args):
        found.append(Inner("ncat", human="ncat --lua-exec runs a Lua program"))
    elif name == "entr" and any(re.fullmatch(r"-[a-z]*s[a-z]*", w.text) for w in args):
        rest = [w for w in args if not w.text.startswith("-")]
        found += [code_of("entr -s", rest[0])] if rest else []
    elif name == "make":
        found += _make(args)
    elif name == "sed":
        found += sed_code(args)
    elif name == "git":
        found += git_code(args)
    return found


def _dynamic_option(name: str, args: tuple[Word, ...]) -> str | None:
    """A word only known when it runs, where `name` would read it as an option."""
    why = f"{name} gets a word only known when it runs ({{}}), which could be an option that runs a command"
    previous: str | None = None
    for word in args:
        if word.text == "--" and word.static and name != "find":
            return None
        if could_be_option(word) and (word.unquoted_dynamic or not _plain_value(name, previous, args)):
            return why.format(word.text)
        previous = word.text
    return None


def _plain_value(name: str, previous: str | None, args: tuple[Word, ...]) -> bool:
    """Whether a single word after `previous` is read as a plain value (never as an option). find's first
    word is its starting point: as an option it could only be `-delete` of the folder the command runs in
    (or an `-exec` with no end, when nothing in the command ends one)."""
    if name == "find":
        first = previous is None and not any(w.text in (";", "+") for w in args)
        return first or previous in _FIND_VALUED
    if previous is None or not previous.startswith("-") or "=" in previous:
        return False
    letters, longs = _VALUED.get(name, ("", frozenset()))
    if previous.startswith("--"):
        return previous in longs
    return len(previous) > 1 and previous[-1] in letters


def _tar(args: tuple[Word, ...]) -> list[Inner]:
    found = []
    for option, value in option_values(args, frozenset({"--checkpoint-action"})):
        if value.text.startswith("exec="):
            found.append(code_of(f"tar {option}", word_suffix(value, 5)))
        elif not value.static:
            found.append(Inner("tar", human="tar --checkpoint-action is only known when it runs"))
    first = args[0].text if args else ""
    if first and not first.startswith("-") and re.fullmatch(r"[A-Za-z]+", first) and set(first) & set("IF"):
        found.append(Inner("tar", human="tar's old-style options take a program to run (I, F)"))
    return found


def _ssh_options(args: tuple[Word, ...]) -> list[Word]:
    """Values of `-o Key=CMD` / `-o 'Key CMD'` whose key runs a command; a dynamic option counts too."""
    code = []
    for _, value in option_values(args, frozenset({"-o"})):
        match = re.match(r"\s*([A-Za-z]+)\s*(?:=\s*|\s+)", value.text)
        if not value.static:
            code.append(value)
        elif match and match.group(1).lower() in _SSH_OPTION_CODE:
            code.append(word_suffix(value, match.end()))
    return code


def _socat_command(word: Word) -> list[Word]:
    """`EXEC:cmd,pty,stderr`: the command, and each address option read as one too (a comma in the
    command would end it for paicli, never hide what follows)."""
    value = word_suffix(word, word.text.index(":") + 1)
    if not value.static:
        return [value]
    return [Word(part, (Literal(part, quoted=True),)) for part in value.text.split(",")]


def _socat_runs(text: str) -> bool:
    return bool(re.match(r"(?i)(exec|system)[:,]", text)) or bool(re.search(r"(?i)!!(exec|system):", text))


def _make(args: tuple[Word, ...]) -> list[Inner]:
    found = []
    for option, value in option_values(args, frozenset({"-f", "--file", "--makefile", "-E", "--eval"})):
        if option in ("-E", "--eval"):
            found.append(Inner(f"make {option}", human="make --eval runs make code, whose recipes are shell"))
        elif not value.static:
            found.append(Inner("make -f", human="make reads a makefile only known when it runs"))
    return found


def stdin_file(word: Word) -> bool:
    """Whether a script file named by `word` is really stdin or the output of a substitution."""
    return (not word.static) or word.text in _STDIN_FILES or word.text.startswith(("/dev/fd/", "/proc/self/fd/"))
