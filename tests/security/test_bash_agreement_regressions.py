"""Every disagreement of bash and the classifier that the differential test's seed (or `python -m bench
fuzz-shell`) found (issue 27), as the smallest command line that shows it. Each runs in the probe
(tests/security/bashprobe.py) and must agree: the programs bash starts are listed, and a SAFE line writes
nothing and starts only what is SAFE on its own.

A case still failing is a strict xfail: it flips to a failure the day the classifier reads it right; then
set `fixed=True`. SEEN maps the seed's own cases (tests/security/test_bash_agreement.py, by the SHA-256
of their text) to the regression each one minimises to, so that test need not minimise them again.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tests.security.bashagree import Checker
from tests.security.bashprobe import BashProbe


@dataclass(frozen=True)
class Regression:
    name: str
    command: str
    reason: str  # what the classifier misreads
    fixed: bool = False


REGRESSIONS = [
    Regression(
        "double-bang", "! ! ls", "in `! ! ls` the second `!` is read as a program, ls is not listed", fixed=True
    ),
    Regression(
        "bang-compound", "! if ls; then cat x; fi", "after `!` a compound command's keywords are programs", fixed=True
    ),
    Regression(
        "time-compound", "time if ls; then cat x; fi", "after `time` a compound's keywords are programs", fixed=True
    ),
    Regression("time-group", "time -p { ls; }", "after `time -p` a group's braces are read as programs", fixed=True),
    Regression("time-assignment", "time x=1 ls", "after `time` an assignment is read as the program name", fixed=True),
    Regression("exec-builtin", "exec printf x", "`exec printf` starts the program printf, not the builtin", fixed=True),
    Regression(
        "hash-path",
        "hash -p /usr/bin/touch ls; ls x",
        "after `hash -p /usr/bin/touch ls`, `ls` starts touch",
        fixed=True,
    ),
    Regression(
        "bang-function", "! function f { ls; }\nf", "after `!` a `function f { …; }` is not a definition", fixed=True
    ),
    Regression(
        "time-function", "time function f { ls; }\nf", "after `time` a `function f { …; }` is not one", fixed=True
    ),
    Regression("time-option", "time -x ls", "`time -x` (any option but -p) runs `-x` as the command", fixed=True),
    Regression(
        "mapfile-callback", "mapfile -C'touch PWN' -c1 v < canary.txt", "`mapfile -Ccode`: code unread", fixed=True
    ),
    Regression("glob-operands", "uniq ./*", "a glob can give uniq two file names: it writes the second", fixed=True),
    Regression(
        "test-process",
        "[[ x = >(touch PWN) ]]",
        "`[[ x = >(cmd) ]]` is SAFE: the substitution runs cmd",
        fixed=True,
    ),
    Regression(
        "quoted-keyword",
        '[["" =>(>PWN) ]]',
        '`[[""` is a command named [[ and its `>(>PWN)` writes',
        fixed=True,
    ),
    Regression(
        "bracket-newline",
        "[\necho x > PWN ]",
        "`[` ends its line, yet the next is read as its test: SAFE",
        fixed=True,
    ),
    Regression("escaped-paren", "ls\n\\)", "`\\)` on a line of its own is a command bash runs, not listed", fixed=True),
    Regression(
        "command-late-v",
        "command ls -v",
        "`-v` after the program is read as `command -v`: ls is not listed",
        fixed=True,
    ),
    Regression(
        "alias-eval",
        "shopt -s expand_aliases\nalias cat='eval'\ncat pwnmark1",
        "an alias to eval runs its words",
        fixed=True,
    ),
    Regression(
        "bang-arithmetic",
        "!(('`pwnmark3`'))",
        "after `!` the grammar reads `((` as two subshells: bash's arithmetic runs the backticks",
        fixed=True,
    ),
    Regression(
        "option-assignment",
        "ls; --output=PWN ls",
        "`--output=PWN` is read as an assignment: bash runs it as the command",
        fixed=True,
    ),
    Regression(
        "underscore-assignment",
        "_=1 ls",
        "`_=1` is read as the command name: bash assigns it and runs ls, which is not listed",
        fixed=True,
    ),
    Regression(
        "time-append",
        "time H+= pwnmark4",
        "after `time` an appending assignment (`H+=`) is read as the program name",
        fixed=True,
    ),
]
OPEN = frozenset(r.command for r in REGRESSIONS if not r.fixed)
# The cases of the differential test's seed that disagree, by the regression each minimises to (the first
# 16 hex digits of the SHA-256 of the case's text; test_bash_agreement.py prints a new one's key).
SEEN_BY_REGRESSION: dict[str, str] = {}  # none left open: the seed's cases all agree since 6093704
SEEN = {key: r.command for r in REGRESSIONS for key in SEEN_BY_REGRESSION.get(r.name, "").split()}


@pytest.mark.parametrize(
    "regression",
    [
        pytest.param(r, marks=() if r.fixed else pytest.mark.xfail(strict=True, reason=f"issue 27: {r.reason}"))
        for r in REGRESSIONS
    ],
    ids=[r.name for r in REGRESSIONS],
)
def test_the_classifier_reads_the_line_as_bash_does(bash_probe: BashProbe, regression: Regression) -> None:
    verdict = Checker(bash_probe).check(regression.command)
    assert verdict.disagreements == (), verdict.report()


def test_every_seen_case_names_a_regression() -> None:
    assert set(SEEN_BY_REGRESSION) <= {r.name for r in REGRESSIONS}
    assert len(SEEN) == sum(len(keys.split()) for keys in SEEN_BY_REGRESSION.values())  # no key twice
