"""Images a REPL message attaches (issue 35): `@shot.png` and a pasted image path become image parts
when the model takes images (a one-line notice and nothing sent when it does not), large ones are made
smaller with Pillow (refused with a hint without it), and the caps hold. Real files, real PNGs."""

from __future__ import annotations

import base64
import io
import sys
from pathlib import Path
from typing import Any

import pytest
from PIL import Image as Pillow
from pydantic import SecretStr

from paicli.app.driver import run_turn
from paicli.common.events import ListSink
from paicli.config import Settings
from paicli.runtime import build_runtime
from paicli.tools.base import ToolContext
from paicli.ui.prompt.image_files import MAX_FILE_BYTES, MAX_IMAGES
from paicli.ui.prompt.mentions import mentioned
from tests.conftest import TEST_KEY
from tests.fakellm import FakeLLM, Reply


def png(path: Path, size: tuple[int, int] = (40, 30), noisy: bool = False) -> Path:
    image = (
        Pillow.frombytes("RGB", size, __import__("os").urandom(size[0] * size[1] * 3))
        if noisy
        else Pillow.new("RGB", size, "red")
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path, format="PNG")
    return path


class Screen:
    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []

    def __call__(self, text: str, style: str) -> None:
        self.lines.append((text, style))


def image_bytes(part: dict[str, Any]) -> bytes:
    url = part["image_url"]["url"]
    assert url.startswith("data:image/")
    return base64.b64decode(url.split(",", 1)[1])


async def test_a_mentioned_image_goes_as_an_image_part(tmp_path: Path) -> None:
    shot = png(tmp_path / "shots" / "bug.png")
    screen = Screen()
    content = await mentioned("what is wrong in @shots/bug.png, then", ToolContext(tmp_path), screen, vision=True)
    assert isinstance(content, list)
    text, image = content
    assert text == {"type": "text", "text": "what is wrong in @shots/bug.png, then"}
    assert image["image_url"]["url"].startswith("data:image/png;base64,") and image_bytes(image) == shot.read_bytes()
    assert screen.lines == [(f"@ attached shots/bug.png (image, {shot.stat().st_size:,} bytes)", "dim")]


async def test_a_model_that_takes_no_images_gets_none_and_the_user_is_told(tmp_path: Path) -> None:
    png(tmp_path / "bug.png")
    screen = Screen()
    content = await mentioned("look at @bug.png", ToolContext(tmp_path), screen, vision=False)
    assert content == "look at @bug.png"
    assert screen.lines == [
        ("bug.png: not sent, the model does not take images (paicli doctor --refresh checks)", "yellow")
    ]


@pytest.mark.parametrize("written", ["'{path}'", '"{path}"', "file://{escaped}", "{escaped}"])
async def test_a_pasted_image_path_attaches_it_wherever_it_is(tmp_path: Path, written: str) -> None:
    shot = png(tmp_path / "Desktop" / "Screen Shot.png")
    pasted = written.format(path=shot, escaped=str(shot).replace(" ", "\\ "))
    content = await mentioned(f"why this? {pasted}", ToolContext(tmp_path / "ws"), Screen(), vision=True)
    assert isinstance(content, list) and image_bytes(content[1]) == shot.read_bytes()


async def test_a_large_image_is_made_smaller(tmp_path: Path) -> None:
    png(tmp_path / "huge.png", (3000, 1000))
    screen = Screen()
    content = await mentioned("@huge.png", ToolContext(tmp_path), screen, vision=True)
    assert isinstance(content, list)
    assert content[1]["image_url"]["url"].startswith("data:image/jpeg;base64,")
    assert Pillow.open(io.BytesIO(image_bytes(content[1]))).size == (2048, 683)
    assert "made smaller: 3000×1000 → 2048×683" in screen.lines[0][0]


async def test_without_pillow_a_large_image_is_refused_with_the_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "big.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x01" * 4_000_000)
    monkeypatch.setitem(sys.modules, "PIL", None)  # as if the images extra were not installed
    screen = Screen()
    assert await mentioned("@big.png", ToolContext(tmp_path), screen, vision=True) is None
    assert "install the images extra (pip install 'paicli[images]')" in screen.lines[0][0]
    assert screen.lines[0][0].endswith("— the message was not sent")


async def test_the_caps_hold(tmp_path: Path) -> None:
    for n in range(MAX_IMAGES + 1):
        png(tmp_path / f"s{n}.png")
    screen = Screen()
    text = " ".join(f"@s{n}.png" for n in range(MAX_IMAGES + 1))
    assert await mentioned(text, ToolContext(tmp_path), screen, vision=True) is None
    assert f"at most {MAX_IMAGES} images go with one message" in screen.lines[0][0]
    with (tmp_path / "giant.png").open("wb") as giant:
        giant.write(b"\x89PNG\r\n\x1a\n")
        giant.truncate(MAX_FILE_BYTES + 1)
    assert await mentioned("@giant.png", ToolContext(tmp_path), screen, vision=True) is None
    (tmp_path / "fake.png").write_text("not an image at all")
    assert await mentioned("@fake.png", ToolContext(tmp_path), screen, vision=True) is None
    assert "fake.png is not a PNG, JPEG, GIF or WebP image" in screen.lines[-1][0]


async def test_an_image_outside_the_workspace_is_refused_as_a_mention(tmp_path: Path) -> None:
    png(tmp_path / "outside.png")
    (tmp_path / "ws").mkdir()
    screen = Screen()
    assert await mentioned("@../outside.png", ToolContext(tmp_path / "ws"), screen, vision=True) is None


async def test_the_model_gets_the_image_with_the_turn(fake: FakeLLM, tmp_path: Path) -> None:
    png(tmp_path / "bug.png")
    settings = Settings(workspace=tmp_path, api_key=SecretStr(TEST_KEY), base_url=fake.base_url, max_attempts=1)
    runtime = build_runtime(settings, ListSink())
    fake.on("what is this", Reply.text("A red square."))
    content = await mentioned("what is this @bug.png", runtime.tool_context(), Screen(), vision=True)
    assert content is not None
    turn = await run_turn(
        runtime, ListSink(), [{"role": "system", "content": "rules"}, {"role": "user", "content": content}]
    )
    assert turn.result is not None and turn.result.content == "A red square."
    assert fake.requests[0].messages[1]["content"][1]["type"] == "image_url"
    await runtime.aclose()
