"""The words ranking compares: identifiers and prose split the same way in a goal, a path and a file.

`read_me_first` and `readMeFirst` both give the whole `read_me_first` plus the parts
`read`, `me`, `first`; words are lower-case, a trailing plural `s` dropped, and a short list of English
and keyword noise left out. Bounded: a text gives at most `MAX_WORDS` words.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{1,80}")
PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
MAX_WORDS = 200_000
_STOP_TEXT = """a an and are as at be but by do does for from has have if in into is it its no not of on or so
    that the their then there these this to was were when which while will with we you your our can
    should would may must also use used using via all any some each get set add new make fix fixed
    self none true false return def class import from let var const func fn pub int str"""
STOP = frozenset(_STOP_TEXT.split())


def stem(word: str) -> str:
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def words(text: str, limit: int = MAX_WORDS) -> list[str]:
    """The words of `text` in order, wholes and parts (see above)."""
    found: list[str] = []
    for match in IDENTIFIER.finditer(text):
        if len(found) >= limit:
            break
        found.extend(split(match.group()))
    return found


def counts(text: str, limit: int = MAX_WORDS) -> Counter[str]:
    """How often each word occurs in `text`: each distinct identifier is split once."""
    identifiers = Counter(IDENTIFIER.findall(text, 0, limit * 8))
    found: Counter[str] = Counter()
    for identifier, times in identifiers.items():
        for word in split(identifier):
            found[word] += times
    return found


@lru_cache(maxsize=65_536)
def split(identifier: str) -> tuple[str, ...]:
    parts = [p.lower() for piece in identifier.split("_") for p in PART.findall(piece)]
    whole = stem("_".join(parts))
    found = [whole] if len(parts) > 1 and whole not in STOP else []
    return (*found, *(stem(p) for p in parts if len(p) > 1 and p not in STOP))
