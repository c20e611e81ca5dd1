"""A web page's readable content as Markdown, with the standard library's HTML parser (fetch_url's; why no
library: docs/dependencies.md).

The heuristic: the page's `<main>` (else its `<article>`, else its `<body>`) without what is never content
(`script`, `style`, `nav`, `header`, `footer`, `aside`, `form`, `svg`, ...), rendered as Markdown: headings,
paragraphs, lists, links as `[text](url)` (made absolute), `pre` blocks fenced, tables as rows of cells
separated by `|`; emphasis is left out. Text is HTML-unescaped; runs of blank space become one space
outside `pre`.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urljoin

SKIPPED = frozenset(
    {"script", "style", "noscript", "template", "nav", "header", "footer", "aside", "form", "svg", "iframe",
     "button", "select", "canvas", "object", "head"}
)  # fmt: skip
BLOCKS = frozenset(
    {"p", "div", "section", "article", "main", "blockquote", "figure", "figcaption", "table", "ul", "ol",
     "dl", "dt", "dd", "br", "hr", "details", "summary", "address"}
)  # fmt: skip
VOID = frozenset({"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "embed", "source", "wbr"})
HEADINGS = {f"h{level}": "#" * level for level in range(1, 7)}
MAX_DEPTH = 500  # nested elements followed; deeper ones count as text of the last one


class _Page(HTMLParser):
    def __init__(self, base_url: str) -> None:
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.title = ""
        self.parts: dict[str, list[str]] = {"main": [], "article": [], "body": []}
        self.open: list[str] = []
        self.skipping = 0  # depth inside skipped elements
        self.pre = 0
        self.links: list[str | None] = []  # href of each open <a>
        self.lists: list[str] = []  # "ul" / "ol" of each open list
        self.in_title = False

    # -- where text goes: every open region among main, article and body collects it
    def _emit(self, text: str) -> None:
        for region in ("main", "article", "body"):
            if region in self.open or (region == "body" and not self.open_regions()):
                self.parts[region].append(text)

    def open_regions(self) -> bool:
        return any(region in self.open for region in ("main", "article", "body"))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self.in_title = True
        if tag in VOID:
            if tag in ("br", "hr") and not self.skipping:
                self._emit("\n" if tag == "br" else "\n\n---\n\n")
            return
        if len(self.open) < MAX_DEPTH:
            self.open.append(tag)
        if tag in SKIPPED or self.skipping:
            self.skipping += 1
            return
        if tag in HEADINGS:
            self._emit(f"\n\n{HEADINGS[tag]} ")
        elif tag == "pre":
            self.pre += 1
            self._emit("\n\n```\n")
        elif tag in ("ul", "ol"):
            self.lists.append(tag)
            self._emit("\n")
        elif tag == "li":
            marker = "1." if self.lists and self.lists[-1] == "ol" else "-"
            self._emit("\n" + "  " * max(0, len(self.lists) - 1) + marker + " ")
        elif tag == "a":
            href = dict(attrs).get("href")
            self.links.append(urljoin(self.base_url, href) if href and not href.startswith("javascript:") else None)
            self._emit("[")
        elif tag in ("td", "th"):
            self._emit(" | ")
        elif tag == "tr":
            self._emit("\n")
        elif tag in ("code", "kbd", "samp") and not self.pre:
            self._emit("`")
        elif tag in BLOCKS:
            self._emit("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        if tag in VOID or tag not in self.open:
            return
        while self.open:  # closes what was left open inside it, as browsers do
            current = self.open.pop()
            self._close(current)
            if current == tag:
                break

    def _close(self, tag: str) -> None:
        if self.skipping:
            self.skipping -= 1
            return
        if tag == "pre":
            self.pre = max(0, self.pre - 1)
            self._emit("\n```\n\n")
        elif tag in ("ul", "ol"):
            if self.lists:
                self.lists.pop()
            self._emit("\n")
        elif tag == "a":
            href = self.links.pop() if self.links else None
            self._emit(f"]({href})" if href else "]")
        elif tag in ("code", "kbd", "samp") and not self.pre:
            self._emit("`")
        elif tag in HEADINGS or tag in BLOCKS:
            self._emit("\n\n")

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title += data
            return
        if self.skipping:
            return
        self._emit(data if self.pre else re.sub(r"\s+", " ", data))


def readable(html: str, base_url: str) -> tuple[str, str]:
    """(the page's title, its readable content as Markdown)."""
    page = _Page(base_url)
    page.feed(html)
    page.close()
    for region in ("main", "article", "body"):
        text = _tidy("".join(page.parts[region]))
        if text:
            return " ".join(page.title.split()), text
    return " ".join(page.title.split()), ""


def _tidy(text: str) -> str:
    """Blank lines at most one in a row, no stray spaces at line starts and ends (inside a fenced block the
    lines stay as they were), links around nothing dropped."""
    text = re.sub(r"\[\s*\]\([^)]*\)", "", text)  # a link around nothing (an icon)
    lines: list[str] = []
    fenced = False
    for line in text.split("\n"):
        if line.strip() == "```":
            fenced = not fenced
            lines.append("```")
        elif fenced:
            lines.append(line.rstrip())
        else:
            bare = line.strip()
            item = bare.startswith(("- ", "1. "))
            lines.append((line[: len(line) - len(line.lstrip())] if item else "") + bare)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
