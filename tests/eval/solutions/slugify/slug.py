"""Slugs for titles."""

import re
import unicodedata


def slugify(title, max_length=None):
    ascii_text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    if max_length is not None and len(slug) > max_length:
        cut = slug[: max_length + 1]
        slug = cut[: cut.rfind("-")] if "-" in cut else slug[:max_length]
        slug = slug.strip("-")
    return slug or "n-a"


def unique_slug(title, taken):
    slug = slugify(title)
    if slug not in taken:
        return slug
    n = 2
    while f"{slug}-{n}" in taken:
        n += 1
    return f"{slug}-{n}"
