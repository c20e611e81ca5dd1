"""Images in a conversation (issue 35): the content part the server gets, a server that refuses images
(the message goes again without them, once, and that is remembered), and estimates that count an image as
an image, not as its base64."""

from __future__ import annotations

from pathlib import Path

from paicli.agent.compress import Compressor, estimate_tokens
from paicli.common.events import ListSink, Notice
from paicli.llm.capability_store import CapabilityStore
from paicli.llm.client import LLMClient
from paicli.llm.images import NOT_SENT, image_part, text_part
from paicli.llm.tokens import estimate_prompt
from tests.fakellm import FakeLLM, Reply

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64


def with_image(data: bytes = PNG) -> list[dict[str, object]]:
    return [{"role": "user", "content": [text_part("what is wrong here?"), image_part(data, "image/png")]}]


def client(fake: FakeLLM, sink: ListSink, store: CapabilityStore | None = None) -> LLMClient:
    return LLMClient(base_url=fake.base_url, api_key="k", model="m", max_attempts=1, sink=sink, store=store)


async def test_an_image_goes_as_an_image_url_part(fake: FakeLLM) -> None:
    fake.on("what is wrong", Reply.text("A typo."))
    llm = client(fake, ListSink())
    assert (await llm.chat(with_image())).content == "A typo."
    [message] = fake.requests[0].messages
    assert message["content"][0] == {"type": "text", "text": "what is wrong here?"}
    assert message["content"][1]["type"] == "image_url"
    assert message["content"][1]["image_url"]["url"].startswith("data:image/png;base64,iVBORw0KGgo")
    await llm.aclose()


async def test_a_server_that_takes_no_images_gets_the_text_again_and_is_remembered(
    fake: FakeLLM, tmp_path: Path
) -> None:
    refused = Reply.error(400, "This model does not support image input.")
    fake.on(lambda body: "image_url" in str(body), refused, repeat=True)
    fake.on("what is wrong", Reply.text("I cannot see it."), repeat=True)
    sink, store = ListSink(), CapabilityStore(tmp_path / "capabilities.json")
    llm = client(fake, sink, store)
    assert (await llm.chat(with_image())).content == "I cannot see it."
    assert len(fake.requests) == 2 and fake.requests[1].messages[0]["content"][1] == text_part(NOT_SENT)
    notices = [e.message for e in sink.events if isinstance(e, Notice)]
    assert notices == ["m does not take images: sending the message without them"]
    await llm.aclose()
    again = client(fake, ListSink(), store)  # another run: known, so the image is left out at once
    await again.chat(with_image())
    assert len(fake.requests) == 3 and "image_url" not in str(fake.requests[2].body)
    assert not again.capabilities.accepts("vision")
    await again.aclose()


def test_an_image_counts_a_fixed_number_of_tokens_whatever_its_size() -> None:
    small, large = with_image(PNG), with_image(PNG + b"\xff" * 3_000_000)
    assert estimate_tokens(large) == estimate_tokens(small) < 1_200
    assert estimate_prompt(large) == estimate_prompt(small) < 1_200


async def test_compressing_a_conversation_never_sends_an_image_as_text(fake: FakeLLM) -> None:
    fake.on(lambda body: True, Reply.text("## State\nlooked at a screenshot"), repeat=True)
    llm = LLMClient(base_url=fake.base_url, api_key="k", model="m", max_attempts=1)
    messages: list[dict[str, object]] = [
        {"role": "system", "content": "SYSTEM"},
        {"role": "user", "content": "GOAL"},
        *with_image(PNG + b"\xaa" * 30_000),
        *[{"role": "assistant", "content": "x" * 3000} for _ in range(8)],
    ]
    compacted = await Compressor(llm, budget_tokens=4000, prompt="COMPRESS", keep_messages=2).compact(messages)
    await llm.aclose()
    sent = fake.requests[0].text
    assert "[image]" in sent and "base64" not in sent and len(sent) < 40_000
    assert "looked at a screenshot" in str(compacted[2]["content"])
