"""`/model` through a small context whose list of models comes from the fake server's GET /models."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from paicli.common.errors import ModelError
from paicli.llm.client import LLMClient
from paicli.ui.commands.model_command import model_command
from tests.fakellm import FakeLLM, Reply


class Context:
    def __init__(self, fake: FakeLLM, model: str = "alpha") -> None:
        self.client = LLMClient(base_url=fake.base_url, api_key="secret-key-123", model=model, max_attempts=1)
        self.said: list[str] = []

    @property
    def model(self) -> str:
        return self.client.model

    def say(self, text: str, style: str = "") -> None:
        self.said.append(text)

    def error(self, text: str) -> None:
        self.said.append("error: " + text)

    def switch_model(self, name: str) -> None:
        self.client.model = name

    async def list_models(self) -> list[str]:
        return await self.client.list_models()


class Picker:
    def __init__(self, answer: str | None) -> None:
        self.answer = answer
        self.offered: list[Any] = []

    async def __call__(self, question: str, names: Sequence[str], current: str) -> str | None:
        self.offered.append((list(names), current))
        return self.answer


async def test_an_unknown_name_is_refused_with_the_list(fake: FakeLLM) -> None:
    fake.models_reply = Reply.models("alpha", "beta", "gamma")
    ctx = Context(fake)
    await model_command(ctx, "gpt-9")  # type: ignore[arg-type]
    assert ctx.model == "alpha"
    assert ctx.said == ["error: the server does not list gpt-9; it lists alpha, beta, gamma"]
    await model_command(ctx, "beta")  # type: ignore[arg-type]
    assert ctx.model == "beta" and ctx.said[-1] == "model switched to beta for this session"
    await ctx.client.aclose()


async def test_no_argument_offers_the_listed_models_in_a_picker(fake: FakeLLM) -> None:
    fake.models_reply = Reply.models("alpha", "beta")
    ctx, picker = Context(fake), Picker("beta")
    await model_command(ctx, "", pick=picker)  # type: ignore[arg-type]
    assert picker.offered == [(["alpha", "beta"], "alpha")]
    assert ctx.model == "beta" and ctx.said == ["model: alpha", "model switched to beta for this session"]
    ctx.said.clear()
    await model_command(ctx, "", pick=Picker(None))  # type: ignore[arg-type]  # Esc
    assert ctx.model == "beta" and ctx.said[-1] == "model unchanged: beta"
    await ctx.client.aclose()


async def test_without_a_list_the_name_is_taken_and_the_reason_said(fake: FakeLLM) -> None:
    fake.models_reply = Reply.error(404, "no such route")
    ctx = Context(fake)
    await model_command(ctx, "", pick=Picker("never"))  # type: ignore[arg-type]
    assert ctx.said[-1] == "the server lists no models (GET /models: HTTP 404: no such route) · /model NAME switches"
    await model_command(ctx, "anything")  # type: ignore[arg-type]
    assert ctx.model == "anything"
    assert "could not check the name against the server's list" in ctx.said[-2]
    await ctx.client.aclose()


async def test_a_server_with_one_model_takes_any_name(fake: FakeLLM) -> None:
    ctx = Context(fake)  # the fake lists only fake-model by default
    await model_command(ctx, "local")  # type: ignore[arg-type]
    assert ctx.model == "local"
    assert ctx.said[0] == "the server lists only fake-model; it may answer to any name"
    await ctx.client.aclose()


async def test_the_key_never_shows_in_a_listing_error(fake: FakeLLM) -> None:
    fake.models_reply = Reply.error(401, "bad key secret-key-123")
    ctx = Context(fake)
    try:
        await ctx.client.list_models()
    except ModelError as err:
        assert "secret-key-123" not in str(err) and "HTTP 401" in str(err)
    else:
        raise AssertionError("no error")
    await ctx.client.aclose()
