"""Run-length encoding."""

import itertools
import re


def encode(text: str) -> str:
    if any(ch.isdigit() for ch in text):
        raise ValueError("digits cannot be encoded")
    out = []
    for ch, run in itertools.groupby(text):
        n = len(list(run))
        out.append(f"{n}{ch}" if n > 1 else ch)
    return "".join(out)


def decode(text: str) -> str:
    out = []
    for count, ch in re.findall(r"(\d*)(\D|$)", text, flags=re.S):
        if not count and not ch:
            continue
        if count and (not ch or count.startswith("0") or int(count) < 2):
            raise ValueError(f"bad run {count}{ch!r}")
        out.append(ch * (int(count) if count else 1))
    return "".join(out)
