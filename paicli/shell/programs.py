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
from dataclasses import replace

from paicli.shell.syntax import Inner, Literal, Word, filled_in
from paicli.shell.wrappers import WRAPPERS, after_options, wrapped

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "ash", "yash", "posh", "rbash", "csh", "tcsh"})
_INTERPRETER = re.compile(
    r"(?:python|pypy)[0-9.]*|perl[0-9.]*|ruby[0-9.]*|node(?:js)?|php[0-9.]*|bun|deno|lua[0-9.]*|luajit|tclsh[0-9.]*"
    r"|Rscript|R|pwsh|osascript|jshell|groovy|scala|julia|awk|gawk|mawk|nawk"
)
_SYSTEM_BIN = frozenset({"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin"})
# Variables whose value a program runs as a command line, or bash expands as code (prompts).
CODE_VARIABLES = frozenset(
    {
        "PAGER",
        "GIT_PAGER",
        "MANPAGER",
        "SYSTEMD_PAGER",
        "EDITOR",
        "VISUAL",
        "GIT_EDITOR",
        "GIT_SEQUENCE_EDITOR",
        "GIT_EXTERNAL_DIFF",
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_ASKPASS",
        "SSH_ASKPASS",
        "SUDO_ASKPASS",
        "GIT_PROXY_COMMAND",
        "LESSOPEN",
        "LESSCLOSE",
        "PS0",
        "PS1",
        "PS2",
        "PS4",
        "PROMPT_COMMAND",
        "BROWSER",
        "FCEDIT",
    }
)
# Variables that make a program load what they name: a startup file, programs, a configuration, a library.
LOADER_VARIABLES = frozenset(
    {
        "BASH_ENV",
        "ENV",
        "GIT_EXEC_PATH",
        "GIT_CONFIG",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_SYSTEM",
        "GIT_CONFIG_PARAMETERS",
        "GIT_CONFIG_COUNT",
        "GIT_TEMPLATE_DIR",
        "LD_PRELOAD",
        "LD_AUDIT",
    }
)
_LOADER_PREFIXES = ("BASH_FUNC_", "GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_")
# Variables that change what a command name runs: an element is an alias, or a name's program (`hash -p`).
NAME_VARIABLES = frozenset({"BASH_ALIASES", "BASH_CMDS"})
_NAME_VARIABLE = re.compile(r"(?<![A-Za-z0-9_])BASH_(?:ALIASES|CMDS)(?![A-Za-z0-9_])")
_ASSIGNING = frozenset({"env", "export", "declare", "typeset", "local", "readonly"})
# Builtins that assign to a variable they are given by name (`read`, `printf -v`, `declare -n REF=NAME`).
_BY_NAME = (_ASSIGNING - {"env"}) | {"read", "mapfile", "readarray", "printf", "getopts", "wait", "let"}
# Builtins whose options name code they run later: the option letters.
_CALLBACK_BUILTINS = {"mapfile": "C", "readarray": "C", "compgen": "CF", "complete": "CF", "bind": "x"}
_FIND_EXEC = ("-exec", "-execdir", "-ok", "-okdir")
_SSH_VALUE_OPTIONS = frozenset("BbcDEeFIiJLlmOoPpQRSWw")


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
    if name in NAME_VARIABLES:
        return Inner(f"${name}", human=f"setting {name} changes what later command names run")
    return None


def inner(words: tuple[Word, ...], *, appended: bool = False) -> list[Inner]:
    """What `words` (a simple command, name first) runs on its behalf, in the order it would. `appended`:
    more arguments come when it runs (`xargs env`: env runs what xargs reads)."""
    if not words:
        return []
    name = basename(words[0].text)
    args = words[1:]
    if appended and name in WRAPPERS and not wrapped(name, args):
        return [Inner(name, human=f"{name} runs a command only known when it runs (its arguments are added)")]
    if name in _BY_NAME and any(_NAME_VARIABLE.search(w.text) for w in args):
        return [
            Inner(
                name,
                human=f"{name} may set {' or '.join(sorted(NAME_VARIABLES))}, which changes what "
                "later command names run",
            )
        ]
    if name in _ASSIGNING:
        settings = [found for found in map(_assigned_in, args) if found is not None]
        return settings + (wrapped(name, args) if name == "env" else [])
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
        command = after_options(args, frozenset({"-n", "--interval", "-d", "--differences", "-q", "--equexit"}))
        return [_code("watch", command)] if command else []
    if name == "ssh":
        return _ssh(args)
    if name in _CALLBACK_BUILTINS:
        return _callbacks(name, args)
    if name == "alias":  # a later line reads the name as its value: `alias cat=eval` makes `cat x` run x
        why = "an alias changes what later command names run, which paicli does not follow"
        return [replace(_code("alias", [_value_word(w)]), human=why) for w in args if "=" in w.text]
    if name == "busybox" and args:
        return [Inner("busybox", args)]
    if name == "find":
        return _find_exec(args)
    if name == "git":
        return _git_aliases(args)
    if name in WRAPPERS:
        return wrapped(name, args)
    return []


def stdin_language(words: tuple[Word, ...]) -> str | None:
    """The language a command reads its program in from stdin (`bash`, `python3 -`, `sh -s`), or None."""
    if not words:
        return None
    name = basename(words[0].text)
    texts = [w.text for w in words[1:]]
    if name in ("at", "batch") and not {"-f", "-l", "-d", "-r", "-c", "-V"} & set(texts):
        return "sh"  # at reads the commands to schedule from stdin
    if name == "make" and _makefile_from_stdin(texts):
        return "make"  # its recipes are shell
    if name in ("ed", "ex", "nex") or (name in ("vi", "vim", "nvim") and {"-e", "-es", "-E", "-Es", "-s"} & set(texts)):
        return name  # editor commands, whose `!` runs shell commands
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


def _makefile_from_stdin(texts: list[str]) -> bool:
    for index, text in enumerate(texts):
        if text in ("-f", "--file", "--makefile") and index + 1 < len(texts):
            value = texts[index + 1]
        elif text.startswith(("--file=", "--makefile=")):
            value = text.split("=", 1)[1]
        elif text.startswith("-f") and not text.startswith("--"):
            value = text[2:]
        else:
            continue
        if value in ("-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"):
            return True
    return False


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
    # `xargs sh -c`: the code is the first argument xargs (or find -exec ... +) adds
    return [Inner(f"{name} -c", code="", dynamic=True)] if command else []


def _callbacks(name: str, args: tuple[Word, ...]) -> list[Inner]:
    """`mapfile -C CODE`, `compgen -C CMD`, `complete -F FUNC`, `bind -x SEQ:CMD`: code a builtin runs later,
    with arguments it adds. Options may be clustered, the value attached (`-tC'cmd'`) or the next word."""
    letters = _CALLBACK_BUILTINS[name]
    found: list[Inner] = []
    for index, word in enumerate(args):
        text = word.text
        if text == "--" or not text.startswith("-") or text == "-":
            break
        for position, letter in enumerate(text[1:], start=1):
            if letter in letters:
                value = text[position + 1 :] or (args[index + 1].text if index + 1 < len(args) else "")
                why = f"{name} -{letter} runs code it adds arguments to when it runs"
                found.append(Inner(f"{name} -{letter}", code=value, dynamic=True, human=why))
                break
    return found


def _code(via: str, words: list[Word] | tuple[Word, ...]) -> Inner:
    text = " ".join(w.text for w in words)
    return Inner(via, code=text, dynamic=not all(w.static for w in words))


def _assigned_in(word: Word) -> Inner | None:
    """`NAME=VALUE` given to `env`, `export`, `declare`, ... as one word."""
    name, equals, _ = word.text.partition("=")
    if not equals or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_%]*(?:\[.*\])?", name, re.DOTALL):
        return None
    return assigned(name.split("[", 1)[0], _value_word(word))


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


def _find_exec(args: tuple[Word, ...]) -> list[Inner]:
    found = []
    index = 0
    while index < len(args):
        if args[index].text in _FIND_EXEC:
            end = index + 1
            while end < len(args) and args[end].text not in (";", "+"):
                end += 1
            command = tuple(filled_in(w, "{}") for w in args[index + 1 : end])
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
