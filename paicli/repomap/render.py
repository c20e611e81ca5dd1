"""The map as text, within a token budget (paicli's estimate: 4 ASCII characters a token,
paicli/llm/tokens.py):

    # Repository map
    2,013 files; ...
    ## Layout (files per folder)
    src/ 120: flask/ 40, json/ 3
    ## Named in the goal
    src/flask/app.py
      class Flask(App)
        def route(self, rule: str, **options)
    ## Most relevant files
    ...
    ## Also relevant
    tests/test_app.py

The layout always (cut to `LAYOUT_SHARE` of the budget); then the files the goal names and the best
ranked ones with their symbols while the map is under `SYMBOLS_SHARE` of the budget; then paths only,
until the budget is spent.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from paicli.llm.tokens import estimate_text
from paicli.repomap.tags import Symbol

# Measured (bench context): every token spent on layout and symbols is a path less, and recall follows the
# number of paths; these shares keep the map's recall near that of its ranking alone.
LAYOUT_SHARE = 0.04
SYMBOLS_SHARE = 0.1
MAX_SYMBOL_FILES = 5
SYMBOL_LINES = 6  # per file
SUBFOLDERS = 5  # shown per top folder


@dataclass(frozen=True)
class RenderedMap:
    text: str
    tokens: int
    files: list[str]  # every file path the map names, in order
    with_symbols: int  # how many of them carry their symbols


def render(
    paths: Sequence[str],
    named: Sequence[str],
    ranked: Sequence[str],
    symbols: Callable[[str], list[Symbol]],
    budget: int,
) -> RenderedMap:
    header = f"# Repository map\n\n{len(paths):,} files (not git-ignored ones); those likeliest to matter first."
    lines = [header, "", "## Layout (files per folder)", *_layout(paths, int(budget * LAYOUT_SHARE))]
    used = estimate_text("\n".join(lines))
    shown: list[str] = []
    detailed = 0
    order = list(dict.fromkeys([*named, *ranked]))
    section = ""
    for position, path in enumerate(order):
        wanted = "## Named in the goal" if path in named else "## Most relevant files"
        block = [path]
        if detailed < MAX_SYMBOL_FILES and (path in named or used < budget * SYMBOLS_SHARE):
            block += _symbol_lines(symbols(path))
            detailed += len(block) > 1
        else:
            wanted = "## Also relevant"
        if wanted != section:
            block.insert(0, f"\n{wanted}")
        cost = estimate_text("\n".join(block)) + 1
        if used + cost > budget:
            if position < len(named) and len(block) > 2:  # a named file keeps its path at least
                block = [block[0], path] if block[0].startswith("\n") else [path]
                cost = estimate_text("\n".join(block)) + 1
            if used + cost > budget:
                break
        if wanted != section:
            section = wanted
        lines += block
        used += cost
        shown.append(path)
    text = "\n".join(lines)
    return RenderedMap(text=text, tokens=estimate_text(text), files=shown, with_symbols=detailed)


def _symbol_lines(symbols: list[Symbol]) -> list[str]:
    lines: list[str] = []
    for symbol in symbols:
        if len(lines) >= SYMBOL_LINES:
            lines.append(f"  … {len(symbols) - len(lines)} more")
            break
        lines.append(("    " if symbol.depth else "  ") + symbol.signature)
    return lines


def _layout(paths: Sequence[str], budget: int) -> list[str]:
    """Top folders with their file counts and their largest subfolders, biggest first, within `budget`."""
    top: Counter[str] = Counter()
    sub: dict[str, Counter[str]] = {}
    for path in paths:
        parts = path.split("/")
        if len(parts) == 1:
            top["."] += 1
            continue
        top[parts[0]] += 1
        if len(parts) > 2:
            sub.setdefault(parts[0], Counter())[parts[1]] += 1
    lines: list[str] = []
    used = 0
    for folder, count in sorted(top.items(), key=lambda item: (-item[1], item[0])):
        name = "(top level)" if folder == "." else f"{folder}/"
        children = sub.get(folder, Counter()).most_common(SUBFOLDERS)
        line = f"{name} {count}" + (": " + ", ".join(f"{c}/ {n}" for c, n in children) if children else "")
        cost = estimate_text(line) + 1
        if used + cost > budget:
            lines.append(f"… {len(top) - len(lines)} more folders")
            break
        lines.append(line)
        used += cost
    return lines or ["(no files)"]
