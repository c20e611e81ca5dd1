"""What `git` runs through its options and configuration: `git rebase -x CMD`, `git config alias.x
'!CMD'`, `git config core.pager CMD`, `git submodule foreach CMD`, `git bisect run CMD`, and a word only
known when it runs where git would read an option. Part of paicli/shell/options.py's walk."""

from __future__ import annotations

import itertools

from paicli.shell.option_values import code_of, could_be_option, option_values
from paicli.shell.syntax import Inner, Word, word_suffix

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
# git's own options before the subcommand that take the next word as their value.
GIT_GLOBAL_VALUED = frozenset(
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


def git_code(args: tuple[Word, ...]) -> list[Inner]:
    index = 0
    while index < len(args) and args[index].text.startswith("-"):
        option = args[index].text.partition("=")[0]
        index += 2 if option in GIT_GLOBAL_VALUED and "=" not in args[index].text else 1
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
        found += [code_of(f"git {sub} {o}", v) for o, v in option_values(rest, _GIT_CODE[sub])]
    if sub == "grep":  # -O takes its value attached only
        found += [code_of("git grep -O", v) for o, v in option_values(rest, frozenset({"-O"}), attached_only=True)]
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
        return [code_of("git config alias", word_suffix(value, 1))] if value.text.startswith("!") else []
    if lowered.startswith("include") or lowered in _GIT_LOADING_KEYS:
        return [Inner("git config", human=f"git config {key.text} makes git load the files it names")]
    if lowered.rsplit(".", 1)[-1] in _GIT_CODE_KEYS:
        return [code_of(f"git config {key.text}", word_suffix(value, 1) if value.text.startswith("!") else value)]
    return []
