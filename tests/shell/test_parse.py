"""Reading a command line as bash does: comments, quotes, substitutions, here-documents, continuations,
and where the grammar cannot be trusted (fails closed as `Unreadable`)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from paicli.shell.parse import parse_script
from paicli.shell.syntax import Compound, HereDoc, Script, SimpleCommand
from paicli.shell.walk import Site, Visitor, walk


class Commands(Visitor):
    """Every simple command the walk reaches, as lists of word texts."""

    def __init__(self) -> None:
        self.seen: list[list[str]] = []

    def command(self, site: Site) -> None:
        self.seen.append([w.text for w in site.words])


def commands(text: str) -> list[list[str]]:
    found = Commands()
    walk(parse_script(text), found)
    return found.seen


def reasons(text: str) -> list[str]:
    return [u.reason for u in _unreadable(parse_script(text))]


def _unreadable(script: Script) -> list:  # type: ignore[type-arg]
    found = list(script.unreadable)
    for pipeline in script.pipelines:
        for command in pipeline.commands:
            words = command.words
            for word in words:
                for inner in word.scripts:
                    found += _unreadable(inner)
            if isinstance(command, Compound):
                for inner in command.scripts:
                    found += _unreadable(inner)
    return found


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("true #'\ntouch x #'", [["true"], ["touch", "x"]]),
        ('true #"\ntouch x #"', [["true"], ["touch", "x"]]),
        ("true # <<EOF\ntouch x\nEOF", [["true"], ["touch", "x"], ["EOF"]]),
        ("true # `\ntouch x # `", [["true"], ["touch", "x"]]),
        ("true # $(\ntouch x # )", [["true"], ["touch", "x"]]),
        ("true;#'\ntouch x", [["true"], ["touch", "x"]]),
        ("echo a#b '#c' \"#d\"", [["echo", "a#b", "#c", "#d"]]),
        ("true #'\r\ntouch x #'\r\n", [["true"], ["touch", "x"]]),
        ("true #'\r\ntouch x\r\n", [["true"], ["touch", "x\r"]]),  # bash keeps the CR in the word
        ("echo $(true #'\ntouch x #'\n)", [["echo", "$(true #'\ntouch x #'\n)"], ["true"], ["touch", "x"]]),
        ("echo a # comment \\\ntouch x", [["echo", "a"], ["touch", "x"]]),  # no continuation in a comment
    ],
)
def test_comments_are_read_as_bash_reads_them(text: str, expected: list[list[str]]) -> None:
    assert sorted(commands(text)) == sorted(expected)


def test_quotes_are_removed_and_substitutions_found_where_bash_runs_them() -> None:
    assert commands("""r"m" -rf 'a b' \\rm c\\ d""") == [["rm", "-rf", "a b", "rm", "c d"]]
    found = commands("""echo "$(one)" '$(two)' `three` <(four) "a `five` b" """)
    assert [c for c in found if c[0] != "echo"] == [["one"], ["three"], ["four"], ["five"]]


def test_backslashes_inside_backticks_are_removed_before_the_code_runs() -> None:
    assert ["rm", "-rf", "/"] in commands("echo `echo \\`rm -rf /\\``")
    assert ["rm"] in commands('echo "`echo \\"x\\" \\`rm\\``"')


def test_here_documents_are_data_but_their_expansions_run() -> None:
    quoted = parse_script("cat <<'EOF'\n$(rm -rf /) `rm` don't\nEOF")
    assert commands("cat <<'EOF'\n$(rm -rf /) `rm` don't\nEOF") == [["cat"]]
    [[cat]] = [p.commands for p in quoted.pipelines]
    assert isinstance(cat, SimpleCommand) and isinstance(cat.inputs[0], HereDoc)
    assert cat.inputs[0].body == "$(rm -rf /) `rm` don't\n" and not cat.inputs[0].expands
    found = commands("cat <<EOF\ndon't $(rm -rf /) `touch x` \\$(not) \\`not\\`\nEOF\nls")
    assert sorted(found) == [["cat"], ["ls"], ["rm", "-rf", "/"], ["touch", "x"]]


def test_line_continuations_join_words_but_not_in_quoted_here_documents() -> None:
    assert commands("r\\\nm -rf /") == [["rm", "-rf", "/"]]
    assert commands("cat <<'E'\nfoo\\\nE\ntouch x\nE") == [["cat"], ["touch", "x"], ["E"]]
    # unquoted: bash joins `E\` with the empty line below into the delimiter, so `touch x` runs
    assert ["touch", "x"] in commands("cat <<E\nE\\\n\ntouch x\nE")
    # unquoted: `foo\` joins the delimiter line, so the body runs on and `touch x` is data
    assert commands("cat <<E\nfoo\\\nE\ntouch x\nE") == [["cat"]]


def test_carriage_returns_form_feeds_and_vertical_tabs_are_word_characters() -> None:
    assert commands("x\r#; rm -rf /") == [["x\r#"], ["rm", "-rf", "/"]]
    assert commands("ls\f-la\vq") == [["ls\f-la\vq"]]


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("echo $'\\x72m'", "does not decode"),
        ("echo 'open", "does not parse"),
        ("python3 - <<EOF\nimport os\nEOF", "skips part of it"),
        ("echo ${!name}", "evaluates text"),
        ("echo ${a[$i]}", "evaluates text"),
        ("[[ -v a[$i] ]]", "variable name"),
        ("[[ $x -eq 1 ]]", "arithmetic"),
        ("a[$i]=1", "arithmetic"),
        ("echo a\x00b", "NUL"),
        ("a <<A; b <<B\n1\nA\n2\nB", "parse"),
    ],
)
def test_what_the_grammar_cannot_read_is_unreadable(text: str, why: str) -> None:
    assert any(why in reason for reason in reasons(text)), reasons(text)


def test_plain_expansions_are_readable() -> None:
    assert reasons('echo "$HOME" ${x:-default} ${#x} ${x%.py} ${a[1]} $((1 + 2))') == []
    assert ["cmd"] in commands("echo ${x:-$(cmd)}")


def test_characters_beyond_the_basic_plane_do_not_crash_the_grammar() -> None:
    """tree-sitter-bash issue 337: `{` followed by a 4-byte character can crash its scanner."""
    code = (
        "from paicli.shell.parse import _parse_nested\n"
        "for i in range(300):\n"
        "    _parse_nested(f'{{\\U00031860 {i} \\u00ee{{\\U000ab40a {i}', 0)\n"
        "script = _parse_nested('echo {\\U00031860}', 0)\n"
        "print(script.pipelines[0].commands[0].words[1].text)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "{\U00031860}"


def test_functions_loops_and_cases_hold_their_commands() -> None:
    found = commands("f() { ls | f & }; for x in a $(b); do cat $x; done; case $y in a) rm -r z;; esac")
    assert sorted(found) == [["b"], ["cat", "$x"], ["f"], ["ls"], ["rm", "-r", "z"]]
    [function] = parse_script("f() { ls; }").pipelines[0].commands
    assert isinstance(function, Compound) and function.name == "f"


def test_commands_run_by_other_programs_are_walked() -> None:
    found = commands(
        "find . -exec rm {} + ; ls | xargs -0 touch; env A=1 nohup timeout 5 git push; bash -c 'mkdir d'; "
        "git -c alias.x='!chmod 777 f' x; sh <<< 'wipefs /dev/sdz'; echo 'shred x' | bash"
    )
    for expected in (
        ["rm", "{}"],
        ["touch"],
        ["git", "push"],
        ["mkdir", "d"],
        ["chmod", "777", "f"],
        ["wipefs", "/dev/sdz"],
        ["shred", "x"],
    ):
        assert expected in found, expected
