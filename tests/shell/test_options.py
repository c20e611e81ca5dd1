"""Options and arguments through which a program runs a command line, read as the program reads them
(abbreviated long options, bundled short ones, attached values), and the words only known when the
command runs that such a program could read as one of those options."""

from __future__ import annotations

import pytest

from paicli.shell.options import option_code
from paicli.shell.parse import parse_script
from paicli.shell.syntax import Inner, SimpleCommand
from paicli.shell.wrappers import runner_commands


def inners(command: str) -> list[Inner]:
    stage = parse_script(command).pipelines[0].commands[0]
    assert isinstance(stage, SimpleCommand)
    return option_code(stage.words)


@pytest.mark.parametrize(
    "command",
    [
        "tar -xf a.tar --to-command='touch x'",
        "tar --to-com='touch x' -xf a.tar",
        "tar -cf a -I 'touch x' f",
        "tar -cfa -I'touch x' f",
        "tar --use-compress-program 'touch x' -cf a f",
        "tar --checkpoint-action=exec='touch x' -cf a f",
        "tar --checkpoint-action 'exec=touch x' -cf a f",
        "rsync -e 'touch x' a h:b",
        "rsync -avze 'touch x' a h:b",
        "rsync --rsh='touch x' a h:b",
        "sort --compress-program='touch x' f",
        "sort --compress 'touch x' f",
        "man -P 'touch x' ls",
        "man --pager='touch x' ls",
        "man -H'touch x' ls",
        "zip -TT 'touch x' a.zip f",
        "ssh -o ProxyCommand='touch x' h",
        "ssh -o 'ProxyCommand touch x' h",
        "ssh -oLocalCommand='touch x' h",
        "scp -o 'proxycommand=touch x' a h:b",
        "socat - EXEC:'touch x'",
        "socat - system:'touch x',pty",
        "nc -e 'touch x' h 1",
        "ncat --sh-exec 'touch x' h 1",
        "sg wheel -c 'touch x'",
        "entr -s 'touch x'",
        "nix-shell --run 'touch x'",
        "npx -c 'touch x'",
        "git grep -O'touch x' pattern",
        "git grep --open-files-in-pager='touch x' pattern",
        "git rebase -x 'touch x' HEAD~1",
        "git rebase --exec='touch x' HEAD~1",
        "git difftool -x 'touch x'",
        "git fetch --upload-pack='touch x' .",
        "git clone -u 'touch x' . y",
        "git push --receive-pack='touch x' .",
        "git archive --exec='touch x' --remote=. HEAD",
        "git submodule foreach 'touch x'",
        "git filter-branch --tree-filter 'touch x'",
        "git config alias.q '!touch x'",
        "git config --global core.pager 'touch x'",
        "git config set diff.evil.textconv 'touch x'",
        "git -C . config credential.helper '!touch x'",
        "git send-email --smtp-server='touch x' p",
        "gsed -n '1e touch x' f",
        "gtar -xf a.tar --to-command='touch x'",
        "git rebase --exe='touch x' HEAD~1",
    ],
)
def test_a_command_line_given_to_an_option_is_code_the_walk_reads(command: str) -> None:
    assert "touch x" in [inner.code for inner in inners(command)], inners(command)


def test_git_bisect_run_runs_a_command() -> None:
    assert [[w.text for w in inner.words] for inner in inners("git bisect run touch x")] == [["touch", "x"]]


@pytest.mark.parametrize(
    "command",
    [
        'tar -cf a.tar --to-command="$CMD" f',
        "tar cIf prog a.tar f",
        'ssh -o "$OPT" h',
        "sort $OPTS f",
        'sort "$F"',
        "find . $X",
        'find . -type f "$X"',
        "find . -name $X",
        'find "$D" -exec wc -l {} +',
        'git log "$X"',
        'git log -C "$X"',
        'git push origin "$B"',
        "git config include.path ../x",
        "git config core.hooksPath hooks",
        'git config "$K" v',
        "make --eval='all:; touch x'",
        'make -f "$M"',
        'make "$T"',
        "vim -es -c '!touch x' f",
        "vi +'!touch x' f",
        "ex -S cmds f",
        "less +'!touch x' f",
        "less '+|touch x' f",
        "parallel touch ::: x",
        "parallel",
        "crontab f",
        "crontab",
        "tmux new -d 'touch x'",
        "screen -dm touch x",
        "ncat --lua-exec x.lua h 1",
        'sed -n 1p "$f"',
        'sed "s/a/$B/" f',
        "tar -tf a.tar $(cat opts)",
    ],
)
def test_what_paicli_cannot_follow_needs_a_human(command: str) -> None:
    assert any(inner.human for inner in inners(command)), inners(command)


@pytest.mark.parametrize(
    "command",
    [
        "tar -czf x.tgz dir",
        "tar czf x.tgz dir",
        'tar -czf "$OUT" dir',
        'tar -C "$D" -xf a.tar',
        "rsync -avz a h:b",
        "sort -k2 -t, f",
        'sort -o "$OUT" f',
        "man ls",
        "ssh h ls",
        "ssh -o BatchMode=yes h",
        "zip -r a.zip dir",
        'find "$D" -name "*.py"',
        'find . -name "$P" -type f',
        'find . -newer "$F"',
        'git log --author "$A"',
        'git log -- "$F"',
        'git show "origin/$B"',
        'git commit -m "$MSG"',
        'git add "$f"',
        'git config user.name "$N"',
        "git config user.name Ada",
        "git grep -e x",
        'make -C "$D" test',
        "make test",
        "less +G f",
        "vim --version",
        "crontab -l",
        "tmux ls",
        "parallel --version",
        "sed -n 1,5p f",
    ],
)
def test_ordinary_use_runs_nothing_and_needs_no_human(command: str) -> None:
    assert inners(command) == []


@pytest.mark.parametrize(
    ("command", "candidates"),
    [
        ("uv run pytest -k x", ["pytest -k x"]),
        ("uv run --python 3.12 tool a", ["3.12 tool a", "tool a"]),
        ("uv run --python=3.12 tool a", ["tool a"]),
        ("uv run --frozen pytest -k x", ["pytest -k x", "x"]),  # -k may be uv's: both are checked
        ("poetry run -- tool -x", ["tool -x"]),
        ("npx eslint src", ["eslint src"]),
        ("direnv exec . tool", ["tool"]),
        ("uv pip install x", []),
        ("uv", []),
    ],
)
def test_a_project_runner_may_start_each_word_that_could_be_its_command(command: str, candidates: list[str]) -> None:
    stage = parse_script(command).pipelines[0].commands[0]
    assert isinstance(stage, SimpleCommand)
    assert [" ".join(w.text for w in c) for c in runner_commands(stage.words)] == candidates
