"""Finding ATX headings (`## Title`) outside fenced code."""

import re

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^(`{3,}|~{3,})")


def headings(markdown: str) -> list:
    """(level, text) of every heading, in order."""
    found = []
    fence = None
    for line in markdown.splitlines():
        opening = _FENCE.match(line)
        if fence:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = None
            continue
        if opening:
            fence = opening.group(1)
            continue
        match = _HEADING.match(line)
        if match:
            found.append((len(match.group(1)), match.group(2)))
    return found
