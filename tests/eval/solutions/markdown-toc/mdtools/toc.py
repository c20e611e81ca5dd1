"""A nested list of links to the headings."""

from mdtools.anchors import unique_anchors
from mdtools.headings import headings


def toc(markdown: str, max_level: int = 6) -> str:
    found = headings(markdown)
    if not found:
        return ""
    top = min(level for level, _ in found)
    anchors = unique_anchors(text for _, text in found)
    return "\n".join(
        f"{'  ' * (level - top)}- [{text}](#{link})"
        for (level, text), link in zip(found, anchors)
        if level <= max_level
    )
