"""Link anchors for heading texts."""

import re


def anchor(text: str) -> str:
    lowered = text.strip().lower()
    kept = re.sub(r"[^\w\- ]", "", lowered)
    return kept.replace(" ", "-")
