"""Word frequencies."""

import re
from collections import Counter

_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*")


def top_words(text, n, stop_words=()):
    if n <= 0:
        return []
    stop = {w.casefold() for w in stop_words}
    counts = Counter(w.casefold() for w in _WORD.findall(text) if w.casefold() not in stop)
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:n]
