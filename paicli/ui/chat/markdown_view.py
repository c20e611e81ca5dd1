"""Markdown as the REPL shows it: links' targets in the text (no terminal hyperlinks), parsed by one shared
markdown-it parser (rich's `Markdown` builds one per instance, about a sixth of the cost of a short block).
rich's Markdown and markdown-it load with the first answer, not at start-up."""

from __future__ import annotations

import functools
from collections.abc import Callable

from rich.console import RenderableType


def markdown(text: str) -> RenderableType:
    """Markdown shown with links' targets (no terminal hyperlinks), parsed by one shared parser: rich's
    `Markdown` builds a markdown-it parser per instance, about a sixth of the cost of a short block."""
    return _shared_parser_markdown()(text)


@functools.cache
def _shared_parser_markdown() -> Callable[[str], RenderableType]:
    from markdown_it import MarkdownIt
    from rich.markdown import Markdown

    parser = MarkdownIt().enable("strikethrough").enable("table")  # what rich's Markdown enables
    prototype = vars(Markdown("", hyperlinks=False))  # rich's own settings, whatever its version has

    class SharedParserMarkdown(Markdown):
        def __init__(self, markup: str) -> None:  # rich's __init__, without building a parser
            self.__dict__.update(prototype)
            self.markup = markup
            self.parsed = parser.parse(markup)

    return SharedParserMarkdown
