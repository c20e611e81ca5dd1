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
    Regression("glob-operands", "uniq ./*", "a glob can give uniq two file names: it writes the second"),
    Regression("test-process", "[[ x = >(touch PWN) ]]", "`[[ x = >(cmd) ]]` is SAFE: the substitution runs cmd"),
    Regression("quoted-keyword", '[["" =>(>PWN) ]]', '`[[""` is a command named [[ and its `>(>PWN)` writes'),
]
OPEN = frozenset(r.command for r in REGRESSIONS if not r.fixed)
# The cases of the differential test's seed that disagree, by the regression each minimises to (the first
# 16 hex digits of the SHA-256 of the case's text; test_bash_agreement.py prints a new one's key).
SEEN_BY_REGRESSION = {
    "double-bang": (
        "0276ce4841a07052 113895ca42c6c9b1 2070bd531eada9d7 2f6d3e429c413e3e 33e595dd6677ae36 "
        "3a18c4804c4240ab 3ca1cb44d46e01c2 41ff915836ff0db4 5680b57918684a84 5ef8397c6de3dcbb "
        "657eaa4de402d771 699e77ddd6b3cb36 69bb7438f74fa2e7 6c58cac8562f1458 6c64bde2b63818f5 "
        "6d9b9b4bedbfa1d7 78b5acb0d476faa2 7c292c4e438f9edc 8343ff52da93ff8d 8673b99d6277608c "
        "959ac58a085f5c8f 95fd9a58c8470c94 aa1fbe65e81a719c aa6b08a2adc431f2 abdecfd7d0386a74 "
        "c71e70c9b2cc759d d261ca0ca748df69 ded0a27537a5c20a e676c3f142472cd7 e930097b733b18b0 "
        "e9d2341d55b4a463 ecd46d3a18ba9b34 ff260a67af32256a ffa1e1255b177c08"
    ),
    "bang-compound": ("a1f46d52f8af9d25 b40f9b42ec497345"),
    "time-assignment": ("37551c6080521256 97ef7c954ba4ff9f 9e4b262beb11e0ad"),
    "exec-builtin": ("482dd219987d7336 60119de28a406318 8e9ba648ec6a7a00 ecb7ba2871460fb2"),
    "bang-function": ("5faf0fbf26763cc3"),
    "time-function": ("ab7b1dec3d0f5297"),
    "mapfile-callback": ("4052eb709f46fcfb"),
}
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
