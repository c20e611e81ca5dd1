"""Issue 27, findings 1 and 2: code in places the grammar reads as text, and input built to be slow or deep.

Each variant is run by bash itself first (with a `command_not_found_handle` that logs the marker command
`pwnmark`): the test proves bash really runs the code, then that the classifier fails closed on it (OPAQUE,
or DENY where the code is on the hard denylist). A command that merely mentions code it does not run
stays as it was.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from paicli.policy.classify import Risk, classify_command
from paicli.shell.parse import MAX_NODES, MAX_STAGES, parse_script

# {P} is the payload: a command bash cannot find, which the handler logs.
HIDDEN = [
    # command substitutions in expansion operands, every operator, quoted and not
    "echo ${X:-`{P}`}",
    "echo ${X-`{P}`}",
    "echo ${X:=`{P}`}",
    "echo ${X=`{P}`}",
    'echo "${HOME+`{P}`}"',
    "echo ${HOME:+`{P}`}",
    "echo ${X:-$({P})}",
    "echo ${X:-<({P})}",
    'echo "${X:-$({P})}"',
    "echo ${X:-${Y:-`{P}`}}",
    "echo ${X[@]:-`{P}`}",
    "echo ${X:-a`{P}`b}",
    'echo ${X:-"`{P}`"}',
    "echo ${HOME#`{P}`}",
    "echo ${HOME%%$({P})}",
    "echo ${HOME/`{P}`/x}",
    "echo ${HOME//h/`{P}`}",
    # the same operand in every place a word goes
    "[[ a == ${X:-`{P}`} ]]",
    "cat <<< ${X:-`{P}`}",
    "for i in ${X:-`{P}`}; do :; done",
    "x=${Y:-`{P}`}",
    "x=(${Y:-`{P}`})",
    "echo > ${X:-`{P}`}",
    "case ${X:-`{P}`} in *) ;; esac",
    "cat <<E\n${X:-`{P}`}\nE",
    "cat <<E\n${X:-$({P})}\nE",
    "cat <<-E\n\t${X:-`{P}`}\n\tE",
    # single quotes that bash does not take as quotes: arithmetic, double-quoted operands
    "echo $(( '$({P}; echo 1)' ))",
    "echo $[ '$({P}; echo 1)' ]",
    "(( '$({P}; echo 1)' ))",
    "echo \"$(( '`{P}`' ))\"",
    "for (( i='$({P})'; i<1; i++ )); do :; done",
    "echo \"${V:-'$({P})'}\"",
    "echo \"${V:-'`{P}`'}\"",
    "cat <<E\n${V:-'$({P})'}\nE",
]
MARKER = "pwnmark"


def ran_marker(command: str, tmp_path: Path) -> bool:
    log = tmp_path / "ran.log"
    handler = tmp_path / "handler.sh"
    handler.write_text(f'command_not_found_handle() {{ printf "%s\\n" "$1" >> {log}; return 127; }}\n')
    env = {"PATH": "/usr/bin:/bin", "BASH_ENV": str(handler), "HOME": str(tmp_path)}
    work = tmp_path / "ws"
    work.mkdir(exist_ok=True)
    subprocess.run(["bash", "-c", command], cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=9)
    return log.exists() and MARKER in log.read_text()


@pytest.mark.parametrize("template", HIDDEN)
def test_code_bash_runs_where_the_grammar_sees_text_is_opaque(workspace: Path, tmp_path: Path, template: str) -> None:
    command = template.replace("{P}", MARKER)
    assert ran_marker(command, tmp_path), "the variant must really run its payload in bash"
    found = classify_command(command, workspace)
    assert found.risk is Risk.OPAQUE, found.reason


@pytest.mark.parametrize(
    "command",
    ["echo ${X:-`mkfs.ext4 -q -F img`}", 'echo "${X+$(mkfs.ext4 img)}"', "echo \"${V:-'$(rm -rf /)'}\""],
)
def test_a_denylisted_program_in_an_operand_is_refused(workspace: Path, command: str) -> None:
    """yolo skips the question OPAQUE asks, never the denylist: it finds the program in the operand too."""
    assert classify_command(command, workspace).risk is Risk.DENY


@pytest.mark.parametrize(
    "command",
    [
        'echo ${HOME:-/tmp} "${HOME}/x" ${#HOME} "${x%.py}"',  # plain operands stay plain
        "echo $((1 + 2)) $[3 * 4]",
        "(( 1 + 2 ))",
        'echo "it\'s $HOME"',
        "grep -n 'foo$' src",
    ],
)
def test_operands_and_arithmetic_without_code_stay_readable(workspace: Path, tmp_path: Path, command: str) -> None:
    command = command.replace("{P}", MARKER)
    assert not ran_marker(command, tmp_path)
    assert classify_command(command, workspace).risk is not Risk.OPAQUE


@pytest.mark.parametrize("command", ["echo ${X:-\\`{P}\\`}", "echo ${X:-'`{P}`'}"])
def test_an_operand_that_only_looks_like_code_is_opaque_too(workspace: Path, tmp_path: Path, command: str) -> None:
    """The rule is about the operand's text, not a second guess of bash's quoting: no code runs, and a person
    still decides (rare in real commands; a reading of quotes there is what went wrong before)."""
    command = command.replace("{P}", MARKER)
    assert not ran_marker(command, tmp_path)
    assert classify_command(command, workspace).risk is Risk.OPAQUE


def test_the_grammar_missing_a_substitution_is_caught_however_it_happens() -> None:
    """Fail closed by construction: text that still holds a backtick where the grammar saw a plain word."""
    script = parse_script("echo ${X:-`touch p`}")
    assert any("bash runs code" in item.reason or "substitution" in item.reason for item in script.unreadable)


@pytest.mark.parametrize(
    "command",
    [
        " | ".join(["cat"] * 40_000),  # took 13 s
        " | ".join(["cat"] * (MAX_STAGES + 1)),
        "; ".join(["ls"] * MAX_NODES),
        "echo " + "$(" * 100_000 + "ls" + ")" * 100_000,
        "[" * 100_000,
        "(" * 5_000 + "ls" + ")" * 5_000,
        "{ " * 3_000 + "ls; " + "}; " * 3_000,
        "echo " + "`" * 1_000,
    ],
    ids=["pipe-40000", "pipe-over-cap", "list", "nested-substitutions", "brackets", "subshells", "groups", "ticks"],
)
def test_hostile_sizes_are_refused_quickly_without_a_crash(workspace: Path, command: str) -> None:
    found = classify_command(command, workspace)
    assert found.risk in (Risk.OPAQUE, Risk.DENY)
    assert "could not be" not in found.reason  # a clear reason, not a caught crash


def test_a_long_quoted_here_document_is_still_read(workspace: Path) -> None:
    body = "x = $y and `more` text\n" * 50_000
    found = classify_command(f"cat > notes.txt <<'E'\n{body}E", workspace)
    assert found.risk is Risk.ASK and "writes to notes.txt" in found.reason


@pytest.mark.parametrize(
    "command",
    [
        "! ! pwnmark",  # the second `!` is a keyword for bash, a program for the grammar
        "! if pwnmark; then :; fi",
        "! { pwnmark; }",
        "! function f { pwnmark; }\nf",
        "time if pwnmark; then :; fi",
        "time -p { pwnmark; }",
        "time x=1 pwnmark",
        "time H+= pwnmark",
        "time a_1+=x pwnmark",
        "time ! pwnmark",
        "time -x pwnmark",  # bash runs `-x` as the command
        "time time pwnmark",
        "time function f { pwnmark; }\nf",
        "hash -p /usr/bin/pwnmark ls; ls",
        "mapfile -C'pwnmark' -c1 v <<< x",
        "readarray -tC pwnmark -c1 v <<< x",
        "enable -n echo; echo x",
    ],
)
def test_keywords_and_builtins_that_change_what_runs_are_opaque(workspace: Path, command: str) -> None:
    """Found by the differential test against bash: the grammar reads these differently, or a builtin makes
    a name start something else. Each fails closed."""
    found = classify_command(command, workspace)
    assert found.risk is Risk.OPAQUE, found.reason


@pytest.mark.parametrize(
    ("command", "programs"),
    [
        ("exec printf x", ("exec", "printf")),
        ("env echo hi", ("env", "echo")),
        ("command echo hi", ("command",)),
        ("find . -exec echo {} +", ("find", "echo")),
        ("time ls", ("ls",)),
        ("! ls", ("ls",)),
        # only an option before the command makes `command` look it up: `command ls -v` runs ls
        ("command ls -v", ("command", "ls")),
        ("command -p ls -V", ("command", "ls")),
        ("command -- ls -v", ("command", "ls")),
        ("command -v ls", ("command",)),
        ("command -pv ls", ("command",)),
        ("command -p -V ls", ("command",)),
    ],
)
def test_a_wrapper_starts_the_program_not_the_builtin(workspace: Path, command: str, programs: tuple[str, ...]) -> None:
    assert classify_command(command, workspace).programs == programs


# Issue 27, regressions the differential test found: text the grammar reads on past where bash ends a word,
# a command or a keyword, or splits off where bash reads on. Bash runs the payload in each.
MISREAD = [
    # `>(` and `<(` in a `[[` pattern: text for the grammar (a regex, or `>` and a parenthesised test)
    "[[ x = >({P}) ]]",
    "[[ x != a>({P}) ]]",
    '[[ x = "a">({P}) ]]',
    "[[ -n x && x = >({P}) ]]",
    "[[ x =~ >({P}) ]]",
    "[[ x = @(>({P})) ]]",
    "[[ x = a<({P}) ]]",
    # a reserved word glued to quotes is a plain word for bash: `[[""` is a command named `[[`
    '[["" = >({P}) ]]',
    "[[''=>({P}) ]]",
    '[[""\t=>({P}) ]]',
    # `[` is a simple command, which a newline ends; the grammar reads the test on
    "[\n{P} ]",
    "[ -n\n{P} ]",
    "[ x = y\n{P} x ]",
    "[ -f x ] && [\n{P} x ]",
    "[\n{P} > out ]",
    # an escaped character starting a line: the grammar glues it to the line before as one word
    "ls\n\\{P}",
    "echo a\n\\{P} x",
    "(ls\n\\{P})",
    "echo $(ls\n\\{P})",
    "ls\n\\{P}\\)",
    "cat x |\nls\n\\{P}",
    # `((` after `!` or `time` is arithmetic for bash, two subshells for the grammar
    "! (( '`{P}; echo 1`' ))",
    "!(('`{P}`'))",
    "time (( '`{P}`' ))",
    "! (( '$({P})' )) && ls",
    # a name bash does not take for a variable: the word is the command, not an assignment
    "1{P}=b ls",
    "1{P}=b",
    # and the other way: `_=1` is an assignment for bash, a command named `_=1` for the grammar
    "_=1 {P}",
    "x=1 _=2 {P}",
    "_+=1 {P} x",
]


@pytest.mark.parametrize("template", MISREAD)
def test_code_the_grammar_reads_past_or_splits_off_is_opaque(workspace: Path, tmp_path: Path, template: str) -> None:
    command = template.replace("{P}", MARKER)
    assert ran_marker(command, tmp_path), "the variant must really run its payload in bash"
    found = classify_command(command, workspace)
    assert found.risk is Risk.OPAQUE, found.reason


@pytest.mark.parametrize("command", ["--output=PWN ls", "--output=PWN --", "--x=1", "9=1 ls"])
def test_a_word_bash_does_not_take_for_an_assignment_is_opaque(workspace: Path, command: str) -> None:
    """The grammar reads `--output=PWN` as an assignment; bash runs it as the command (which the marker
    handler cannot log: its printf reads the name as an option, so the probe's regression proves it)."""
    assert classify_command(command, workspace).risk is Risk.OPAQUE


@pytest.mark.parametrize(
    "command",
    [
        "[[ a > b ]]",
        "[[ a>b ]]",
        "[[ a < (b) ]]",
        "[ -f x ] && ls",
        "ls \\)",
        "[[\n-n x\n]]",
        '[ "a\nb" = x ]',
        "if [[ -d src ]]; then ls; fi",
        "{ ls; }",
        "for f in a b; do echo $f; done",
        "case x in a) ls;; esac",
        "[[ x == [ab]* ]]",
        "echo ${a[1]}",
        "( (ls) )",
        "! ( (ls) )",
        "a-b=1 ls",
        "_x=1 ls",
    ],
)
def test_tests_keywords_and_escapes_bash_reads_alike_stay_readable(workspace: Path, command: str) -> None:
    assert classify_command(command, workspace).risk is not Risk.OPAQUE


# An alias (or an element of BASH_ALIASES) makes a later line read a name as its value: `cat x` runs `eval x`.
# BASH_CMDS does the same for the program a name starts. paicli does not follow either: OPAQUE.
ALIASED = [
    "shopt -s expand_aliases\nalias cat=eval\ncat {P}",
    "shopt -s expand_aliases\nalias x='bash -c'\nx {P}",
    "shopt -s expand_aliases\nalias ls='{P} '\nls",
    "set -o posix; alias cat=eval\ncat {P}",
    "shopt -s expand_aliases; BASH_ALIASES[cat]=eval\ncat {P}",
    "shopt -s expand_aliases; BASH_ALIASES+=([cat]=eval)\ncat {P}",
    "shopt -s expand_aliases; declare -A BASH_ALIASES=([cat]=eval)\ncat {P}",
    "shopt -s expand_aliases; declare -n r=BASH_ALIASES; r[cat]=eval\ncat {P}",
    "shopt -s expand_aliases; read 'BASH_ALIASES[cat]' <<< eval\ncat {P}",
    "shopt -s expand_aliases; printf -v 'BASH_ALIASES[cat]' eval\ncat {P}",
]


@pytest.mark.parametrize("template", ALIASED)
def test_an_alias_that_changes_what_a_name_runs_is_opaque(workspace: Path, tmp_path: Path, template: str) -> None:
    command = template.replace("{P}", MARKER)
    assert ran_marker(command, tmp_path), "the variant must really run its payload in bash"
    found = classify_command(command, workspace)
    assert found.risk is Risk.OPAQUE, found.reason


@pytest.mark.parametrize(
    "command",
    [
        "alias ll='ls -l'",
        "BASH_CMDS[ls]=/usr/bin/touch; ls x",
        "BASH_CMDS=([ls]=/usr/bin/touch)",
        "mapfile BASH_CMDS < list",
        "typeset -n r=BASH_CMDS",
    ],
)
def test_every_way_to_define_an_alias_or_a_hashed_program_is_opaque(workspace: Path, command: str) -> None:
    assert classify_command(command, workspace).risk is Risk.OPAQUE
