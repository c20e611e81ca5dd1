"""The `e` commands of a sed script (GNU sed runs them with the shell): found wherever sed's own parser
finds them, missed nowhere sed's parser would not look (text of `a`/`i`/`c`, file names, regexps)."""

from __future__ import annotations

import pytest

from paicli.shell.parse import parse_script
from paicli.shell.sed import sed_code
from paicli.shell.syntax import Inner, SimpleCommand


def found(command: str) -> list[Inner]:
    stage = parse_script(command).pipelines[0].commands[0]
    assert isinstance(stage, SimpleCommand) and stage.words[0].text == "sed"
    return sed_code(stage.words[1:])


@pytest.mark.parametrize(
    "command",
    [
        "sed 's/foo/bar/g' f",
        "sed -i 's/foo/bar/' f",
        "sed -i.bak -e 's/a/b/' -e 's/c/d/' f",
        "sed -n '/start/,/end/p' f",
        "sed '/^#/d;/^$/d' f",
        "sed -n '10,20p' f",
        "sed '1d;$d' f",
        r"sed -E 's/([0-9]+)/<\1>/g' f",
        "sed 's#/usr/local#/opt#g' f",
        r"sed 's/\//\\/g' f",
        r"sed '$!N;s/\n/ /' f",
        r"sed ':a;N;$!ba;s/\n/,/g' f",
        "sed '/pattern/a\\\nnew line' f",
        "sed '/pattern/i inserted; e line' f",
        "sed '2c replaced' f",
        "sed 'y/abc/xyz/' f",
        "sed '/x/{\ns/a/b/\np\n}' f",
        "sed '5q' f",
        "sed 's/a/b/2g' f",
        "sed 's/x/y/I' f",
        "sed '0,/re/s//X/' f",
        "sed '1~3d' f",
        "sed '/a/,+2d' f",
        "sed -n '/x/!p' f",
        "sed 's/e/E/g' f",
        "sed '/e/d' f",
        "sed -e :a -e '$!N;s/\\n//;ta' f",
        "sed = f",
        "sed -n '/foo/{=;p}' f",
        r"sed 's/^[ \t]*//;s/[ \t]*$//' f",
        "sed 's/a/b/w out.txt' f",
        "sed 's/a/b/we' f",
        "sed '/x/r other.e' f",
        "sed -s -n '$p' a b",
        "sed --in-place=.bak 's/x/y/' f",
        "sed -z 's/\\n/ /g' f",
        "sed '1!G;h;$!d' f",
        "sed 'N;P;D' f",
        "sed 's/a/b/;# e comment\ns/c/d/' f",
        "sed 's|a|b|;T;s|c|d|' f",
        "sed -n '2{p;q}' f",
        "sed '/start/,$ d' f",
        "sed --sandbox '1e touch x' f",
        "sed -ie 's/a/b/' f",
    ],
)
def test_ordinary_scripts_run_nothing(command: str) -> None:
    assert found(command) == []


@pytest.mark.parametrize(
    ("command", "code"),
    [
        ("sed -n '1e touch x' f", "touch x"),
        ("sed '/a/ e touch x' f", "touch x"),
        ("sed '1!e touch x' f", "touch x"),
        ("sed '$!{e touch x\n}' f", "touch x"),
        ("sed -e 'e touch x' f", "touch x"),
        ("sed -ne'1e touch x' f", "touch x"),
        ("sed --expression='e touch x' f", "touch x"),
        ("sed --expr 'e touch x' f", "touch x"),
        ("sed --e='e touch x' f", "touch x"),
        ("sed -n -l 5 'e touch x' f", "touch x"),
        ("sed -e 'a text' -e 'e touch x' f", "touch x"),
        ("sed 'v;e touch x' f", "touch x"),
        ("sed 'b end;e touch x' f", "touch x"),
        ("sed ':a;e touch x' f", "touch x"),
        ("sed 's/a/b/;e touch x' f", "touch x"),
        ("sed 'y/a/b/;e touch x' f", "touch x"),
        ("sed '/x/I,/y/M e touch x' f", "touch x"),
        (r"sed '\%x%e touch x' f", "touch x"),
        ("sed 's/x/y/g\ne touch x' f", "touch x"),
        ("sed -- 'e touch x' f", "touch x"),
    ],
)
def test_the_e_command_is_found_wherever_sed_reads_it(command: str, code: str) -> None:
    assert [(inner.code, inner.human) for inner in found(command)] == [(code, None)]


@pytest.mark.parametrize(
    "command",
    [
        "sed 'e' f",
        "sed '1e' f",
        "sed 's/.*/touch x/e' f",
        "sed 's/x/y/ge' f",
        "sed 's/x/y/3e' f",
        "sed 's|x|y|Ie' f",
        "sed 'x;e' f",
        "sed -f script.sed f",
        "sed --file=script.sed f",
        "sed -nf s.sed f",
        "sed 's/a/b' f",
        "sed 'k' f",
        "sed '/unterminated' f",
        "sed 's/x/y/Z' f",
    ],
)
def test_a_pattern_space_command_a_script_file_or_an_unreadable_script_needs_a_human(command: str) -> None:
    inners = found(command)
    assert inners and all(inner.human for inner in inners), inners
