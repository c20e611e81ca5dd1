"""Link anchors for heading texts."""

import re


def anchor(text: str) -> str:
    lowered = text.strip().lower()
    kept = re.sub(r"[^\w\- ]", "", lowered)
    return kept.replace(" ", "-")


def unique_anchors(texts) -> list:
    seen = {}
    result = []
    for text in texts:
        base = anchor(text)
        count = seen.get(base, 0)
        result.append(base if count == 0 else f"{base}-{count}")
        seen[base] = count + 1
    return result
