"""`paicli run` saves its conversation and `-c` continues it; `-c` is refused where it does not apply."""

from __future__ import annotations

from pathlib import Path

from paicli.app.sessions import SessionStore, sessions_folder
from tests.conftest import TEST_KEY, paicli_env, run_paicli
from tests.fakellm import FakeLLM, Reply


def test_run_with_continue_carries_the_earlier_exchange_and_saves_both(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    fake.on("the number is 42", Reply.text(f"Noted: 42 (key {TEST_KEY})."))
    fake.on("which number", Reply.text("It was 42."))
    env = paicli_env(fake, home)
    first = run_paicli(["-C", str(workspace), "run", "the number is 42"], env)
    assert first.code == 0, first.stderr
    second = run_paicli(["-C", str(workspace), "run", "which number", "--continue"], env)
    assert second.code == 0, second.stderr
    assert second.stdout.strip() == "It was 42."
    sent = [(m["role"], m["content"]) for m in fake.requests[-1].messages if m["role"] != "system"]
    assert sent == [("user", "the number is 42"), ("assistant", "Noted: 42 (key ***)."), ("user", "which number")]

    store = SessionStore(sessions_folder(home, workspace))
    assert len(store.ids()) == 1  # continued: the same conversation
    saved = store.load(store.ids()[0])
    assert saved.summary.turns == 2 and saved.summary.first_message == "the number is 42"
    assert TEST_KEY not in store.path_of(saved.summary.id).read_text()


def test_run_with_continue_and_nothing_saved_starts_a_new_conversation(
    fake: FakeLLM, workspace: Path, home: Path
) -> None:
    fake.on("hello", Reply.text("Hi."))
    done = run_paicli(["-C", str(workspace), "run", "hello", "-c"], paicli_env(fake, home))
    assert done.code == 0 and done.stdout.strip() == "Hi."
    assert "no earlier conversation in this workspace" in done.stderr


def test_continue_is_refused_with_plan_and_undo(fake: FakeLLM, workspace: Path, home: Path) -> None:
    env = paicli_env(fake, home)
    for args in (["plan", "a goal", "--yes", "-c"], ["-c", "undo", "--list"], ["doctor", "--continue"]):
        done = run_paicli(["-C", str(workspace), *args], env)
        assert done.code == 2, (args, done.stderr)
        assert "-c/--continue goes with the REPL and `paicli run`" in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
    assert fake.requests == []
