"""`@path` mentions in the REPL, through a real pseudo-terminal: attached text, refusals, completion."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.fakellm import FakeLLM, Reply
from tests.plan_script import PLANNER, plan_json, requests_of, script_summary, system_is, task_is
from tests.ui.conftest import PROMPT, Spawn, expect_text

pytestmark = pytest.mark.pty

ENTER = "\r"
TAB = "\t"


def send_line(child: object, text: str) -> None:
    child.send(text)  # type: ignore[attr-defined]
    child.send(ENTER)  # type: ignore[attr-defined]


def last_user(fake: FakeLLM) -> str:
    return [m["content"] for m in fake.requests[-1].messages if m["role"] == "user"][-1]


def test_a_file_mention_attaches_its_numbered_lines_and_plain_at_words_stay_text(
    spawn_repl: Spawn, fake: FakeLLM, workspace: Path
) -> None:
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("def main():\n    return 42\n")
    fake.on("explain", Reply.text("It returns 42."))
    child = spawn_repl()
    send_line(child, "explain @src/app.py, ask me@example.com about @dataclass")
    expect_text(child, "attached src/app.py (2 lines)")
    expect_text(child, "It returns 42.")
    sent = last_user(fake)
    assert sent.startswith("explain @src/app.py, ask me@example.com about @dataclass\n\n")
    assert "     1\tdef main():" in sent and "     2\t    return 42" in sent
    assert sent.count("[attached @") == 1  # neither the e-mail address nor @dataclass attached anything


def test_a_folder_and_a_glob_attach_names(spawn_repl: Spawn, fake: FakeLLM, workspace: Path) -> None:
    (workspace / "pkg").mkdir()
    (workspace / "pkg" / "one.py").write_text("1\n")
    (workspace / "pkg" / "two.py").write_text("2\n")
    (workspace / "notes.md").write_text("n\n")
    fake.on("look", Reply.text("Looked."))
    child = spawn_repl()
    send_line(child, "look at @pkg and @**/*.py")
    expect_text(child, "Looked.")
    sent = last_user(fake)
    assert "[attached @pkg (folder)" in sent and "one.py\ntwo.py" in sent
    assert "[attached @**/*.py (glob)" in sent and "pkg/one.py\npkg/two.py" in sent
    assert "notes.md" not in sent


def test_an_outside_or_binary_mention_is_refused_and_nothing_is_sent(
    spawn_repl: Spawn, fake: FakeLLM, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside-secret.txt"
    outside.write_text("top secret\n")
    (workspace / "link.txt").symlink_to(outside)
    (workspace / "blob.bin").write_bytes(b"\x00\x01\x02")
    child = spawn_repl()
    for mention in (str(outside), "../outside-secret.txt", "link.txt", "blob.bin"):
        send_line(child, f"read @{mention}")
        expect_text(child, "the message was not sent")
        child.expect_exact(PROMPT)
        child.send("\x03")  # the refused message waits in the prompt; Ctrl-C clears it
        child.expect_exact(PROMPT)
    assert fake.requests == []


def test_tab_completes_a_path_after_at_and_respects_gitignore(
    spawn_repl: Spawn, fake: FakeLLM, workspace: Path
) -> None:
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    (workspace / ".gitignore").write_text("ignored_module.py\n")
    (workspace / "ignored_module.py").write_text("x\n")
    (workspace / "src").mkdir()
    (workspace / "src" / "unique_module.py").write_text("print('hi')\n")
    fake.on("show", Reply.text("Shown."), repeat=True)
    child = spawn_repl()
    child.send("show @uniqmod")
    expect_text(child, "src/unique_module.py")  # the menu, fuzzy: the typed letters in order
    child.send(TAB)  # takes the first entry of the menu
    child.send(ENTER)
    expect_text(child, "Shown.")
    assert "print('hi')" in last_user(fake)
    child.expect_exact(PROMPT)
    child.send("show @ignored_mod")
    child.send(TAB)
    child.send(ENTER)
    expect_text(child, "Shown.")
    assert last_user(fake) == "show @ignored_mod"  # nothing completed, nothing attached


def test_a_plan_goal_mention_goes_to_the_planner_only(spawn_repl: Spawn, fake: FakeLLM, workspace: Path) -> None:
    (workspace / "spec.txt").write_text("the spec says: be brief\n")
    fake.on(system_is(PLANNER), Reply.text(plan_json({"only": []}, summary="one step")))
    fake.on(task_is("only"), Reply.text("did it"))
    script_summary(fake, "Done in one step.")
    child = spawn_repl("--no-review")
    send_line(child, "/plan follow @spec.txt")
    expect_text(child, "attached spec.txt (1 lines) · for the planner")
    expect_text(child, "one step")
    child.send(ENTER)
    expect_text(child, "Done in one step.", timeout=20)
    planner = next(r for r in fake.requests if r.body and system_is(PLANNER)(r.body))
    assert "the spec says: be brief" in planner.text
    assert all("the spec says" not in r.text for r in requests_of(fake, "only"))
