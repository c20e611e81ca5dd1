"""A nested list of links to the headings."""

from mdtools.anchors import anchor
from mdtools.headings import headings


def toc(markdown: str) -> str:
    found = headings(markdown)
    if not found:
        return ""
    top = min(level for level, _ in found)
    return "\n".join(f"{'  ' * (level - top)}- [{text}](#{anchor(text)})" for level, text in found)
