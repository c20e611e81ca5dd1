"""`/model` in a real pseudo-terminal: the picker lists what the fake server's GET /models lists."""

from __future__ import annotations

import pytest

from tests.fakellm import FakeLLM, Reply
from tests.ui.conftest import PROMPT, Spawn, expect_text

pytestmark = pytest.mark.pty

ENTER = "\r"
DOWN = "\x1b[B"
ESC = "\x1b"


def test_model_picks_from_the_servers_list_and_refuses_an_unknown_name(spawn_repl: Spawn, fake: FakeLLM) -> None:
    fake.models_reply = Reply.models("gpt-4o-mini", "model-b", "model-c")
    fake.on("hello", Reply.text("Hi from b."))
    child = spawn_repl()
    child.send("/model nonsense" + ENTER)
    expect_text(child, "the server does not list nonsense; it lists gpt-4o-mini, model-b, model-c")
    child.expect_exact(PROMPT)
    child.send("/model" + ENTER)
    expect_text(child, "Switch to which model?")
    expect_text(child, "model-c")
    child.send(DOWN)
    child.send(ENTER)
    expect_text(child, "model switched to model-b for this session")
    child.expect_exact(PROMPT)
    child.send("hello" + ENTER)
    expect_text(child, "Hi from b.")
    assert fake.requests[-1].body is not None and fake.requests[-1].body["model"] == "model-b"
    child.expect_exact(PROMPT)
    child.send("/model" + ENTER)
    expect_text(child, "Switch to which model?")
    child.send(ESC)
    expect_text(child, "model unchanged: model-b")
