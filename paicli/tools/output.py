"""Shaping tool output for the model: masking secrets, capping length, decoding bytes.

Everything here is pure and cheap. `HeadTailBuffer` keeps a command's output bounded in memory while
it streams: the first and the last bytes are kept, the middle is only counted.
"""

from __future__ import annotations

import base64
import functools
import re
from collections.abc import Iterable

MASK = "***"
# Shorter "secrets" would mask ordinary words and make the output unreadable; real keys are long.
MIN_SECRET_LENGTH = 4
# Encoded forms are looked for only for secrets this long (a key), and only forms this long are masked.
MIN_ENCODED_SECRET = 12
MIN_FORM = 10
# What may stand between two characters of a secret written out "spaced": blanks, line breaks (base64
# wraps at 76 columns), escaped line breaks (JSON), quotes and commas (a list of characters).
_SEPARATOR = r"(?:[\s\"',;:|]|\\[nrt]){0,3}"


def mask_secrets(text: str, secrets: Iterable[str]) -> str:
    """Replace every occurrence of each secret value with `***` (longest first, so overlaps stay hidden),
    and, for a long secret (a key), its encoded forms too: base64 (standard and URL-safe, at each of the
    three alignments it can have inside longer encoded text), hex (either case), reversed, and each of
    these with blanks, line breaks or punctuation between its characters."""
    values = sorted({s for s in secrets if len(s.strip()) >= MIN_SECRET_LENGTH}, key=len, reverse=True)
    for value in values:
        text = text.replace(value, MASK)
    for value in values:
        if len(value) >= MIN_ENCODED_SECRET:
            text = _encoded(value).sub(MASK, text)
    return text


def encoded_forms(secret: str) -> list[str]:
    """What `secret` looks like reversed, in hex and in base64 (the characters that depend on it alone)."""
    raw = secret.encode()
    forms = [secret, secret[::-1], raw.hex()]
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        for shift in range(3):
            encoded = encode(b"\0" * shift + raw).decode()
            forms.append(encoded[(8 * shift + 5) // 6 : (8 * (shift + len(raw))) // 6])
    return [form for form in dict.fromkeys(forms) if len(form) >= MIN_FORM]


@functools.lru_cache(maxsize=64)
def _encoded(secret: str) -> re.Pattern[str]:
    hex_form = secret.encode().hex()
    branches = []
    for form in encoded_forms(secret):
        spaced = _SEPARATOR.join(re.escape(char) for char in form)
        branches.append(f"(?i:{spaced})" if form == hex_form else spaced)
    return re.compile("|".join(branches))


def omitted_marker(count: int, unit: str = "characters") -> str:
    return f"\n[... {count} {unit} omitted ...]\n"


def truncate_middle(text: str, limit: int) -> str:
    """Cap `text` at `limit` characters, keeping its head and tail around an omission marker.

    The result never exceeds `limit` characters. A limit too small to hold the marker gives a plain cut.
    """
    if len(text) <= limit:
        return text
    marker_room = len(omitted_marker(len(text)))
    if limit <= marker_room * 2:
        return text[: max(limit, 0)]
    budget = limit - marker_room
    head = budget // 2
    tail = budget - head
    omitted = len(text) - head - tail
    return text[:head] + omitted_marker(omitted) + text[len(text) - tail :]


def decode_text(data: bytes) -> str:
    """Decode bytes as UTF-8, replacing invalid sequences with U+FFFD (never fails)."""
    return data.decode("utf-8", errors="replace")


class HeadTailBuffer:
    """Bounded capture of a byte stream: the first `head_bytes` and the last `tail_bytes` are kept.

    Memory stays at most about `head_bytes + 2 * tail_bytes` whatever the stream's length.
    """

    def __init__(self, head_bytes: int, tail_bytes: int) -> None:
        self._head_cap = head_bytes
        self._tail_cap = tail_bytes
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self._head_cap - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if not data:
            return
        self._tail += data
        # Trim lazily (at twice the cap) so trimming costs amortised O(1) per byte.
        if len(self._tail) > 2 * self._tail_cap:
            del self._tail[: len(self._tail) - self._tail_cap]

    def clear(self) -> None:
        """Forgets what was fed: the buffer starts again."""
        self._head.clear()
        self._tail.clear()
        self.total = 0

    def render(self, limit: int) -> str:
        """The captured text in at most `limit` characters; an omitted middle is reported in bytes."""
        tail = bytes(self._tail[-self._tail_cap :]) if self._tail_cap else b""
        head = bytes(self._head)
        if self.total == len(head) + len(tail):
            whole = decode_text(head + tail)
            if len(whole) <= limit:
                return whole
        head_text = decode_text(head)
        tail_text = decode_text(tail)
        marker_room = len(omitted_marker(self.total, "bytes"))
        budget = max(limit - marker_room, 0)
        head_text = head_text[: budget // 2]
        tail_text = tail_text[len(tail_text) - (budget - len(head_text)) :] if budget > len(head_text) else ""
        shown = len(head_text.encode("utf-8")) + len(tail_text.encode("utf-8"))
        omitted = max(self.total - shown, 0)
        return head_text + omitted_marker(omitted, "bytes") + tail_text
