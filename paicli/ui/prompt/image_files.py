"""Images a REPL message attaches (issue 35): `@shot.png` in the workspace, or the path of an image pasted
(or dragged) into the prompt, wherever it is: the user named it.

A file counts as an image by its first bytes (PNG, JPEG, GIF, WebP), never by its name alone. At most
MAX_IMAGES go with one message; a file over MAX_FILE_BYTES is refused unread; one larger than MAX_SIDE
pixels a side or MAX_SENT_BYTES is made smaller with Pillow (the `paicli[images]` extra) when it is
installed, and refused with that hint when it is not.
"""

from __future__ import annotations

import io
import os
import re
from dataclasses import dataclass
from pathlib import Path

from paicli.tools.confined import UnsafeFile, human_size, read_path

MAX_IMAGES = 5
MAX_FILE_BYTES = 20 * 1024 * 1024
MAX_SENT_BYTES = 3_750_000  # some 5 MB as base64: what the strictest providers take
MAX_SIDE = 2048
SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)
SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")
_PASTED = re.compile(  # a path as a terminal pastes it: quoted, or with its spaces escaped
    r"(?:^|(?<=\s))(?:file://)?(?:'(?P<single>[~/][^']*)'|\"(?P<double>[~/][^\"]*)\"|(?P<bare>[~/](?:\\ |[^\s'\"])*))"
    r"(?=\s|$)"
)


class ImageError(Exception):
    """An image that may not be sent: one line for the user."""


@dataclass(frozen=True)
class Image:
    name: str  # as the user named it
    mime: str
    data: bytes
    note: str = ""  # what was done to it ("made smaller: 4000×3000 → 2048×1536")


def image_type(head: bytes) -> str | None:
    """The MIME type of an image by its first bytes; None for anything else."""
    for signature, mime in SIGNATURES:
        if head.startswith(signature):
            return mime
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def looks_like_image(path: str) -> bool:
    return path.lower().endswith(SUFFIXES)


def load_image(path: Path, name: str) -> Image:
    """The image at `path` (already confined by the caller where it must be), ready to send."""
    try:
        data = read_path(path, limit=MAX_FILE_BYTES)
    except (UnsafeFile, OSError) as error:
        reason = error if isinstance(error, UnsafeFile) else error.strerror or error
        raise ImageError(f"{name}: {reason}") from None
    mime = image_type(data[:16])
    if mime is None:
        raise ImageError(f"{name} is not a PNG, JPEG, GIF or WebP image")
    return fitted(Image(name, mime, data))


def fitted(image: Image) -> Image:
    """The image, made smaller when it is too large to send (Pillow), else ImageError."""
    try:
        from PIL import Image as Pillow  # the `images` extra: only for images too large to send as they are
    except ImportError:
        if len(image.data) > MAX_SENT_BYTES:
            raise ImageError(
                f"{image.name} is {human_size(len(image.data))}, over the {human_size(MAX_SENT_BYTES)} an image may "
                "be; install the images extra (pip install 'paicli[images]') to have it made smaller"
            ) from None
        return image
    try:
        with Pillow.open(io.BytesIO(image.data)) as opened:
            width, height = opened.size
            if len(image.data) <= MAX_SENT_BYTES and max(width, height) <= MAX_SIDE:
                return image
            smaller = opened.convert("RGB") if opened.mode not in ("RGB", "L") else opened.copy()
            smaller.thumbnail((MAX_SIDE, MAX_SIDE))
            out = io.BytesIO()
            smaller.save(out, format="JPEG", quality=85)
    except (OSError, ValueError, Pillow.DecompressionBombError) as error:
        raise ImageError(f"{image.name} cannot be read as an image: {error}") from None
    data = out.getvalue()
    if len(data) > MAX_SENT_BYTES:
        raise ImageError(f"{image.name} is still {human_size(len(data))} made smaller; crop it first")
    note = f"made smaller: {width}×{height} → {smaller.size[0]}×{smaller.size[1]}"
    return Image(image.name, "image/jpeg", data, note)


def pasted_paths(text: str) -> list[str]:
    """Absolute (or ~/) paths of image files in `text` that exist, as a terminal pastes or drags them in
    (quoted, `file://`, spaces escaped with a backslash)."""
    found: list[str] = []
    for match in _PASTED.finditer(text):
        raw = match.group("single") or match.group("double") or match.group("bare").replace("\\ ", " ")
        path = os.path.expanduser(raw)
        if looks_like_image(path) and os.path.isfile(path) and path not in found:
            found.append(path)
    return found
