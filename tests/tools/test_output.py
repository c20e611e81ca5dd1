"""Output shaping: secret masking, head + tail truncation, bounded capture of a byte stream."""

from __future__ import annotations

import base64
import re
import textwrap
from collections.abc import Callable

import pytest

from paicli.tools.output import HeadTailBuffer, decode_text, encoded_forms, mask_secrets, truncate_middle


def test_mask_replaces_every_occurrence_of_every_secret() -> None:
    text = "key=sk-abc123 again sk-abc123 and pw=hunter22"
    assert mask_secrets(text, ["sk-abc123", "hunter22"]) == "key=*** again *** and pw=***"


def test_mask_prefers_the_longest_secret_when_they_overlap() -> None:
    assert mask_secrets("token sk-abcdef", ["sk-abc", "sk-abcdef"]) == "token ***"


def test_mask_ignores_empty_and_tiny_secrets() -> None:
    assert mask_secrets("a b c", ["", "a", "  "]) == "a b c"


def test_short_text_is_not_truncated() -> None:
    assert truncate_middle("hello", 10) == "hello"


def test_truncation_keeps_head_and_tail_and_counts_what_was_cut() -> None:
    text = "HEAD" + "x" * 10_000 + "TAIL"
    out = truncate_middle(text, 1000)
    assert len(out) <= 1000
    assert out.startswith("HEAD") and out.endswith("TAIL")
    match = re.search(r"\n\[\.\.\. (\d+) characters omitted \.\.\.\]\n", out)
    assert match is not None
    assert len(out) - len(match.group(0)) + int(match.group(1)) == len(text)


def test_truncation_with_a_tiny_limit_just_cuts() -> None:
    assert truncate_middle("abcdefghij" * 10, 5) == "abcde"


def test_decode_replaces_invalid_utf8() -> None:
    assert decode_text(b"ok \xff\xfe end") == "ok \ufffd\ufffd end"


def test_buffer_keeps_everything_when_small() -> None:
    buffer = HeadTailBuffer(head_bytes=100, tail_bytes=100)
    buffer.feed(b"hello ")
    buffer.feed(b"world")
    assert buffer.render(1000) == "hello world"


def test_buffer_keeps_head_and_tail_of_a_long_stream_in_bounded_memory() -> None:
    buffer = HeadTailBuffer(head_bytes=1000, tail_bytes=1000)
    buffer.feed(b"START")
    for _ in range(10_000):
        buffer.feed(b"y\n" * 500)
    buffer.feed(b"END")
    assert buffer.total == 5 + 10_000 * 1000 + 3
    assert len(buffer._head) + len(buffer._tail) <= 3000
    out = buffer.render(500)
    assert len(out) <= 500
    assert out.startswith("START") and out.endswith("END")
    assert "bytes omitted" in out


KEY = "sk-live-Zq81XkeyMaterial0042abcdefXYZ"


@pytest.mark.parametrize(
    "shown",
    [
        pytest.param(lambda k: base64.b64encode(f"export PAICLI_API_KEY={k}\n".encode()).decode(), id="base64"),
        pytest.param(lambda k: base64.b64encode(f"x{k}".encode()).decode(), id="base64-shift-1"),
        pytest.param(lambda k: base64.b64encode(f"xy{k}".encode()).decode(), id="base64-shift-2"),
        pytest.param(lambda k: base64.urlsafe_b64encode(f"?{k}?".encode()).decode(), id="base64-url"),
        pytest.param(
            lambda k: "\n".join(textwrap.wrap(base64.b64encode(("#" * 70 + k).encode()).decode(), 76)), id="wrapped"
        ),
        pytest.param(lambda k: k.encode().hex(), id="hex"),
        pytest.param(lambda k: k.encode().hex().upper(), id="HEX"),
        pytest.param(lambda k: " ".join(k.encode().hex()[i : i + 2] for i in range(0, 2 * len(k), 2)), id="hex-spaced"),
        pytest.param(lambda k: k[::-1], id="reversed"),
        pytest.param(lambda k: " ".join(k), id="spaced"),
        pytest.param(lambda k: "\\n".join(k), id="json-newlines"),
        pytest.param(lambda k: ",".join(repr(c) for c in k), id="char-list"),
        pytest.param(lambda k: " ".join(k[::-1]), id="reversed-spaced"),
    ],
)
def test_encoded_forms_of_a_key_are_masked(shown: Callable[[str], str]) -> None:
    text = f"before {shown(KEY)} after"
    masked = mask_secrets(text, [KEY])
    assert "***" in masked and masked.startswith("before ") and masked.endswith(" after")
    for form in encoded_forms(KEY):
        assert form not in masked.replace("\n", "")


def test_ordinary_text_is_left_alone() -> None:
    text = "def main():\n    return base64.b64encode(b'hello world') + 'deadbeef' * 4\n"
    assert mask_secrets(text, [KEY]) == text
