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

import itertools
import re

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
# Git subcommands whose options run programs or write files, and the options of each that take the next
# word as a plain value (a word only known when it runs after one of those is not read as an option).
_LOG_VALUED = frozenset(
    {
        "-n",
        "--max-count",
        "--skip",
        "--since",
        "--after",
        "--until",
        "--before",
        "--author",
        "--committer",
        "--grep",
        "--format",
        "--pretty",
        "-S",
        "-G",
        "--encoding",
    }
)
_REMOTE_VALUED = frozenset({"--depth", "-b", "--branch", "--origin", "-j", "--jobs", "--shallow-since"})
_GIT_VALUED: dict[str, frozenset[str]] = {
    "log": _LOG_VALUED,
    "show": _LOG_VALUED,
    "whatchanged": _LOG_VALUED,
    "shortlog": _LOG_VALUED,
    "diff": frozenset({"-S", "-G"}),
    "grep": frozenset({"-e", "-m", "--max-count", "-A", "-B", "-C", "--max-depth"}),
    "format-patch": frozenset({"--subject-prefix", "-v", "--to", "--cc"}),
    "rebase": frozenset({"--onto"}),
    "fetch": _REMOTE_VALUED,
    "pull": _REMOTE_VALUED,
    "clone": _REMOTE_VALUED,
    "push": _REMOTE_VALUED,
    "ls-remote": frozenset(),
    "archive": frozenset({"--format", "--prefix"}),
    "submodule": frozenset({"-b"}),
    "bisect": frozenset(),
    "filter-branch": frozenset(),
    "difftool": frozenset(),
    "mergetool": frozenset(),
    "send-email": frozenset(),
    "instaweb": frozenset(),
    "daemon": frozenset(),
    "range-diff": frozenset(),
    "blame": frozenset({"-L"}),
    "annotate": frozenset({"-L"}),
}
_GIT_CODE = {
    "grep": frozenset({"-O", "--open-files-in-pager"}),
    "rebase": frozenset({"-x", "--exec"}),
    "difftool": frozenset({"-x", "--extcmd"}),
    "fetch": frozenset({"--upload-pack"}),
    "pull": frozenset({"--upload-pack"}),
    "clone": frozenset({"--upload-pack", "-u"}),
    "ls-remote": frozenset({"--upload-pack", "-u"}),
    "archive": frozenset({"--exec"}),
    "push": frozenset({"--receive-pack", "--exec"}),
    "send-email": frozenset({"--smtp-server", "--to-cmd", "--cc-cmd", "--header-cmd", "--sendmail-cmd"}),
    "instaweb": frozenset({"--httpd", "-d", "--browser", "-b"}),
    "filter-branch": frozenset(
        {
            "--env-filter",
            "--tree-filter",
            "--index-filter",
            "--parent-filter",
            "--msg-filter",
            "--commit-filter",
            "--tag-name-filter",
        }
    ),
}
# Configuration keys (their last part) whose value git runs as a command line; keys that load files.
_GIT_CODE_KEYS = frozenset(
    {
        "pager",
        "editor",
        "sshcommand",
        "external",
        "textconv",
        "command",
        "clean",
        "smudge",
        "process",
        "fsmonitor",
        "askpass",
        "helper",
        "program",
        "cmd",
        "driver",
        "uploadpack",
        "receivepack",
        "gitproxy",
        "proxycommand",
        "sendmailcmd",
        "smtpserver",
        "browser",
        "exec",
    }
)
_GIT_LOADING_KEYS = frozenset({"core.hookspath", "core.worktree", "core.attributesfile", "core.excludesfile"})
_GIT_GLOBAL_VALUED = frozenset(
    {
        "-C",
        "-c",
        "--git-dir",
        "--work-tree",
        "--namespace",
        "--config-env",
        "--super-prefix",
        "--exec-path",
        "--list-cmds",
        "--attr-source",
    }
)
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
        found += [_code(f"{name} {option}", value) for option, value in _values(args, _COMMAND_OPTIONS[name])]
    if name in _ATTACHED_ONLY:
        found += [_code(f"{name} {o}", v) for o, v in _values(args, _ATTACHED_ONLY[name], attached_only=True)]
    if name == "tar":
        found += _tar(args)
    elif name in ("ssh", "scp", "sftp"):
        found += [_code(f"{name} -o", v) for v in _ssh_options(args)]
    elif name == "socat":
        found += [_code("socat", part) for w in args if _socat_runs(w.text) for part in _socat_command(w)]
    elif name == "ncat" and any(w.text.startswith("--lua-exec") for w in args):
        found.append(Inner("ncat", human="ncat --lua-exec runs a Lua program"))
    elif name == "entr" and any(re.fullmatch(r"-[a-z]*s[a-z]*", w.text) for w in args):
        rest = [w for w in args if not w.text.startswith("-")]
        found += [_code("entr -s", rest[0])] if rest else []
    elif name == "make":
        found += _make(args)
    elif name == "sed":
        found += sed_code(args)
    elif name == "git":
        found += _git(args)
    return found


def could_be_option(word: Word) -> bool:
    """Whether a word only known when it runs could be read as an option: it may be split into several
    words, or it may start with `-` (it does not start with plain text)."""
    if word.static:
        return False
    if word.unquoted_dynamic:
        return True
    first = word.parts[0] if word.parts else None
    return not (isinstance(first, Literal) and first.text and not first.text.startswith("-"))


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


def _values(args: tuple[Word, ...], options: frozenset[str], *, attached_only: bool = False) -> list[tuple[str, Word]]:
    """The values given to `options`: `--long=V`, `--long V`, `--lo=V` (an abbreviation), `-xV`, `-x V`,
    and `-abx V` (short options bundled; read generously, so a bundle is never missed)."""
    found = []
    for index, word in enumerate(args):
        text = word.text
        if text == "--":
            break
        following = args[index + 1] if index + 1 < len(args) and not attached_only else None
        if text.startswith("--") and len(text) > 2:
            given, equals, _ = text.partition("=")
            for option in options:
                if option.startswith("--") and option.startswith(given):
                    if equals:
                        found.append((option, word_suffix(word, len(given) + 1)))
                    elif following is not None:
                        found.append((option, following))
                    break
        elif text.startswith("-") and not text.startswith("--") and len(text) > 1:
            for option in options:
                if option.startswith("--") or option[1:] not in text[1:]:
                    continue
                rest = text[text.index(option[1:], 1) + len(option) - 1 :]
                if rest:
                    found.append((option, word_suffix(word, len(text) - len(rest))))
                elif following is not None:
                    found.append((option, following))
    return found


def _code(via: str, value: Word) -> Inner:
    return Inner(via, code=value.text, dynamic=not value.static)


def _tar(args: tuple[Word, ...]) -> list[Inner]:
    found = []
    for option, value in _values(args, frozenset({"--checkpoint-action"})):
        if value.text.startswith("exec="):
            found.append(_code(f"tar {option}", word_suffix(value, 5)))
        elif not value.static:
            found.append(Inner("tar", human="tar --checkpoint-action is only known when it runs"))
    first = args[0].text if args else ""
    if first and not first.startswith("-") and re.fullmatch(r"[A-Za-z]+", first) and set(first) & set("IF"):
        found.append(Inner("tar", human="tar's old-style options take a program to run (I, F)"))
    return found


def _ssh_options(args: tuple[Word, ...]) -> list[Word]:
    """Values of `-o Key=CMD` / `-o 'Key CMD'` whose key runs a command; a dynamic option counts too."""
    code = []
    for _, value in _values(args, frozenset({"-o"})):
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
    for option, value in _values(args, frozenset({"-f", "--file", "--makefile", "-E", "--eval"})):
        if option in ("-E", "--eval"):
            found.append(Inner(f"make {option}", human="make --eval runs make code, whose recipes are shell"))
        elif not value.static:
            found.append(Inner("make -f", human="make reads a makefile only known when it runs"))
    return found


def _git(args: tuple[Word, ...]) -> list[Inner]:
    index = 0
    while index < len(args) and args[index].text.startswith("-"):
        option = args[index].text.partition("=")[0]
        index += 2 if option in _GIT_GLOBAL_VALUED and "=" not in args[index].text else 1
    if index >= len(args) or not args[index].static:
        return []
    sub, rest = args[index].text, args[index + 1 :]
    found: list[Inner] = []
    if sub in _GIT_VALUED:
        valued = _GIT_VALUED[sub]
        for previous, word in itertools.pairwise((Word("", ()), *rest)):
            if word.text == "--" and word.static:
                break
            if could_be_option(word) and (word.unquoted_dynamic or previous.text not in valued):
                why = f"git {sub} gets a word only known when it runs ({word.text}), which could be an option"
                found.append(Inner(f"git {sub}", human=why + " that runs a command"))
                break
    if sub in _GIT_CODE:
        found += [_code(f"git {sub} {o}", v) for o, v in _values(rest, _GIT_CODE[sub])]
    if sub == "grep":  # -O takes its value attached only
        found += [_code("git grep -O", v) for o, v in _values(rest, frozenset({"-O"}), attached_only=True)]
    if sub == "submodule" and "foreach" in [w.text for w in rest]:
        after = rest[[w.text for w in rest].index("foreach") + 1 :]
        code = [w for w in after if not w.text.startswith("--")]
        found += (
            [
                Inner(
                    "git submodule foreach",
                    code=" ".join(w.text for w in code),
                    dynamic=not all(w.static for w in code),
                )
            ]
            if code
            else []
        )
    if sub == "bisect" and rest and rest[0].text == "run" and len(rest) > 1:
        found.append(Inner("git bisect run", rest[1:]))
    if sub == "config":
        found += _git_config(rest)
    return found


def _git_config(args: tuple[Word, ...]) -> list[Inner]:
    """`git config [set] KEY VALUE`: an alias's `!CODE`, and values git runs as command lines."""
    operands = []
    skip = False
    for word in args:
        if skip:
            skip = False
        elif word.text in ("-f", "--file", "--blob", "--type", "--default", "--comment", "--value"):
            skip = True
        elif not word.text.startswith("-"):
            operands.append(word)
    if operands and operands[0].text in ("set", "--add"):
        operands = operands[1:]
    if len(operands) < 2:
        return []
    key, value = operands[0], operands[1]
    if not key.static:
        return [Inner("git config", human="git config sets a key only known when it runs")]
    lowered = key.text.lower()
    if lowered.startswith("alias."):
        return [_code("git config alias", word_suffix(value, 1))] if value.text.startswith("!") else []
    if lowered.startswith("include") or lowered in _GIT_LOADING_KEYS:
        return [Inner("git config", human=f"git config {key.text} makes git load the files it names")]
    if lowered.rsplit(".", 1)[-1] in _GIT_CODE_KEYS:
        return [_code(f"git config {key.text}", word_suffix(value, 1) if value.text.startswith("!") else value)]
    return []


def stdin_file(word: Word) -> bool:
    """Whether a script file named by `word` is really stdin or the output of a substitution."""
    return (not word.static) or word.text in _STDIN_FILES or word.text.startswith(("/dev/fd/", "/proc/self/fd/"))
