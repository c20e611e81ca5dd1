"""Issue 19, class 3: options smuggled in through globs. A file named `--compress-program=sh` is an option
to `sort` once `*` expands to it. A glob whose matches can start with `-` is never SAFE; `./*` and
`src/*.py` cannot start with `-` and stay SAFE (their matches are still checked as paths)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from paicli.policy.classify import Risk, classify_command
from paicli.policy.paths import option_like_glob
from paicli.shell.parse import parse_script
from paicli.shell.syntax import SimpleCommand
from tests.fakellm import FakeLLM
from tests.repos import git_init
from tests.security.redteam import Canaries, all_refused, attack

HOSTILE = [
    "--compress-program=sh",
    "-S1k",
    "--files0-from=list",
    "-exec",
    "-delete",
    "-v",
    "--output=x",
    "-rf",
    "--pre=sh",
    "-T",
    "name\nwith newline",
    "it's",
    'dq"uote',
    "sp ace",
    "-",
    "--",
    "a[$(touch p)]",
]


@pytest.fixture
def hostile(workspace: Path) -> Path:
    git_init(workspace)
    for name in HOSTILE:
        (workspace / name).write_text("x\n")
    (workspace / "src").mkdir()
    (workspace / "src" / "a.py").write_text("x\n")
    return workspace


def first_word(text: str, index: int = 1):  # type: ignore[no-untyped-def]
    [command] = parse_script(text).pipelines[0].commands
    assert isinstance(command, SimpleCommand)
    return command.words[index]


@pytest.mark.parametrize(
    ("glob", "option_like"),
    [
        ("*", True),
        ("?*", True),
        ("[-a]*", True),
        ("-*", True),
        ("*.txt", True),
        ("[!.]*", True),
        ("'-'*", True),
        ("./*", False),
        ("src/*.py", False),
        ("x*", False),
        ('"*"', False),
        ("\\*", False),
        ("'./'*", False),
    ],
)
def test_which_globs_can_expand_to_an_option(glob: str, option_like: bool) -> None:
    assert option_like_glob(first_word(f"cat {glob}")) is option_like


@pytest.mark.parametrize(
    "command",
    [
        "sort * | head -1",
        "sort ?*",
        "sort [-a]* | head",
        "cat -- *",
        "grep x *",
        "grep -r x *",
        "rg x *",
        "find *",
        "find * -name x",
        "ls *",
        "wc -l *",
        "head *",
        "tail -n1 *",
        "du *",
        "file *",
        "nl *",
        "diff *",
        "jq . *",
        "tree *",
        "git diff *",
        "git log -- *",
        "md5sum *",
        "cut -c1 *",
        "uniq *",
        "stat *",
        "printf *",
        "test *",
        "[ * ]",
        "sort *.txt",
        "sort -*",
        "cat [[:alpha:]]*",
        "cat .*",
    ],
)
def test_a_glob_that_can_expand_to_an_option_is_never_safe(hostile: Path, command: str) -> None:
    found = classify_command(command, hostile)
    assert found.risk >= Risk.ASK, command


@pytest.mark.parametrize(
    "command", ["cat ./*", "ls ./*", "wc -l src/*.py", "grep -n x ./*", "echo *", "head ./s*", "printf %s *"]
)
def test_globs_that_cannot_start_with_a_dash_stay_safe(hostile: Path, command: str) -> None:
    found = classify_command(command, hostile)
    assert found.risk is Risk.SAFE, found.reason


@pytest.mark.parametrize(
    "command", ["uniq ./*", "uniq src/*.py", "uniq -c ./s*", "uniq -- ./*", "uniq -f1 ./[a-z]*", "uniq ./?rc/a.py"]
)
def test_a_glob_can_give_uniq_the_second_file_name_it_writes(hostile: Path, command: str) -> None:
    found = classify_command(command, hostile)
    assert found.risk is Risk.ASK and "writes the second one" in found.reason, found.reason


def test_uniq_of_one_file_or_a_quoted_star_stays_safe(hostile: Path) -> None:
    assert classify_command("uniq -c src/a.py", hostile).risk is Risk.SAFE
    assert classify_command("uniq './*'", hostile).risk is Risk.SAFE


def test_the_glob_really_makes_uniq_overwrite_a_file(tmp_path: Path) -> None:
    """The control: two matches, and bash's `uniq ./*` writes the first file's lines over the second."""
    (tmp_path / "a.txt").write_text("a\na\n")
    (tmp_path / "b.txt").write_text("precious\n")
    subprocess.run(["bash", "-c", "uniq ./*"], cwd=tmp_path, check=False, timeout=30)
    assert (tmp_path / "b.txt").read_text() == "a\n"


def test_a_symlink_out_of_the_workspace_is_outside_through_a_safe_glob(hostile: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("s3cret\n")
    (hostile / "link.txt").symlink_to(tmp_path / "secret.txt")
    assert classify_command("cat ./*.txt", hostile).risk is Risk.ASK
    assert classify_command("cat ./[l]ink.txt", hostile).risk is Risk.ASK


def test_end_to_end_sort_with_hostile_names_runs_no_compressor(
    fake: FakeLLM, workspace: Path, home: Path, tmp_path: Path
) -> None:
    outside = Canaries(tmp_path / "outside")
    for name in ("--compress-program=sh", "-S1k"):
        (workspace / name).write_text("")
    (workspace / "payload").write_text(f"touch {outside.folder}/sorted\n" * 400)
    commands = [
        "sort * | head -1",
        "sort ?* | head -1",
        "sort [-p]* | head -1",
        "sort -- * | head -1",
        "sort -*  payload | head -1",
        "cat * | sort | head -1",
        "sort ./payload * | head -1",
    ]
    done = attack(fake, workspace, home, commands, "auto")
    assert outside.untouched()
    assert all_refused(done, len(commands))


def test_the_issue_example_really_runs_the_payload_when_nobody_checks(workspace: Path, tmp_path: Path) -> None:
    """The control: run unchecked, the glob really does smuggle the option (so the refusal above matters)."""
    for name in ("--compress-program=sh", "-S1k"):
        (workspace / name).write_text("")
    (workspace / "payload").write_text(f"touch {tmp_path}/ran\n" * 400)
    subprocess.run(["bash", "-c", "sort * > /dev/null 2>&1"], cwd=workspace, check=False, timeout=30)
    assert (tmp_path / "ran").exists()
