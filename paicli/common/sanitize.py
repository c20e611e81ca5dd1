"""The one sanitizer for untrusted text on its way to a terminal (and the JSON-lines escape).

Text from a model, a tool, a file, a configuration or a server is untrusted. Before any of it reaches a
terminal it goes through `terminal_safe`, on every display path (chat, live view, review screen,
approval prompt, headless progress, `paicli run`'s answer, error messages):

- every control character (C0 but tab and newline, DEL, C1: so every escape sequence), bidi
  embeddings, overrides and isolates, zero-width and other invisible format characters, line and
  paragraph separators and lone surrogates are shown as a visible escape (`\\x1b]52;…`, `\\u202e`): no
  sequence reaches the terminal, and what the user reads is what is there (an approval question or the
  audit shows the hidden parts of a command);
- `\\r\\n` becomes `\\n`; a lone `\\r` (which would let later text overwrite a line) is shown as `\\x0d`.

`json_safe` escapes the same characters inside a JSON document (`\\u009b`, `\\u202e`): the data stays the
same for a JSON reader, and a human who `cat`s the stream sees no control sequences.

`well_formed` (and `well_formed_json` for decoded JSON) is the other half, applied once where text enters
paicli rather than where it leaves: a JSON `"\\ud800"` decodes to a lone surrogate, which no UTF-8 writer
(an event, a saved plan, a session file) can encode. Model replies (the SSE and JSON decoding), tool-call
arguments, plans parsed from a reply or a file, saved plans, session files and MCP messages replace each
lone surrogate with U+FFFD as they are decoded, so nothing downstream meets one.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
_CANDIDATE = re.compile(r"[^\x20-\x7e\n\t]")  # all but printable ASCII, newline and tab: rare in most text


def unsafe_char(char: str) -> bool:
    """Whether a terminal could be driven, or the reader misled, by this character."""
    return char not in "\n\t" and unicodedata.category(char) in _UNSAFE_CATEGORIES


def _shown(match: re.Match[str]) -> str:
    char = match.group()
    if not unsafe_char(char):
        return char
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: str) -> str:
    """`text` as it may be written to a terminal: see the module docstring."""
    if not _CANDIDATE.search(text):
        return text
    text = text.replace("\r\n", "\n")
    return _CANDIDATE.sub(_shown, text)


def one_line(text: str, limit: int = 160) -> str:
    """Untrusted text made safe and flat: whitespace runs (newlines too) become one space, cut at `limit`."""
    flat = " ".join(terminal_safe(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def json_safe(document: str) -> str:
    """A JSON document with C1 controls, DEL, bidi and other format characters written as `\\uXXXX`.

    Meant for JSON text, where such characters can only stand inside strings (JSON escapes C0 itself)."""
    return _CANDIDATE.sub(_json_escape, document)


def _json_escape(match: re.Match[str]) -> str:
    char = match.group()
    if not unsafe_char(char):
        return char
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    high, low = divmod(code - 0x10000, 0x400)
    return f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04x}"


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def well_formed(text: str) -> str:
    """`text` with every lone surrogate (what a JSON `\\ud800` decodes to) replaced by U+FFFD."""
    return _LONE_SURROGATE.sub(REPLACEMENT, text)


def well_formed_json(value: Any) -> Any:
    """Freshly decoded JSON with `well_formed` applied to every string in it, keys too (changed in place,
    without recursion: any depth `json.loads` accepted is walked)."""
    if isinstance(value, str):
        return well_formed(value)
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key in [k for k in node if isinstance(k, str) and _LONE_SURROGATE.search(k)]:
                node[well_formed(key)] = node.pop(key)
            items: Any = node.items()
        elif isinstance(node, list):
            items = enumerate(node)
        else:
            continue
        for place, item in list(items):
            if isinstance(item, str):
                if _LONE_SURROGATE.search(item):
                    node[place] = well_formed(item)
            elif isinstance(item, dict | list):
                stack.append(item)
    return value
