"""The map as text, within a token budget (paicli's estimate: 4 ASCII characters a token,
paicli/llm/tokens.py):

    # Repository map
    2,013 files; ...
    ## Layout (files per folder)
    src/ 120: flask/ 40, json/ 3
    docs/ 30, tests/ 12
    top-level files: README.md, pyproject.toml
    ## Named in the goal
    src/flask/app.py
      class Flask(App)
        def route(self, rule: str, **options)
    ## Most relevant files
    ...
    ## Also relevant
    tests/test_app.py

The layout always: every top folder with its file count, the biggest with their largest subfolders
(within `LAYOUT_SHARE` of the budget), and every top-level file by name (within `TOP_NAMES_SHARE`); then
the files the goal names (with their symbols), and from a budget of `SYMBOLS_FROM` tokens the best ranked
ones with their symbols while the map is under `SYMBOLS_SHARE` of the budget; then paths only, until the
budget is spent (a top-level file the layout names is not named again without symbols). The budget is
that of the whole text (its estimate), not a sum of estimates per line, which rounds each line up.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from paicli.llm.tokens import CHARS_PER_TOKEN, estimate_text
from paicli.repomap.tags import Symbol

# Measured (bench context): every token spent on layout and symbols is a path less, and recall follows the
# number of paths; these shares keep the map's recall near that of its ranking alone.
LAYOUT_SHARE = 0.04
SYMBOLS_SHARE = 0.1
SYMBOLS_FROM = 2_000  # a smaller map names paths only (and the symbols of the files the goal names):
# measured (bench context, mypy, 39 commits): at 1,000 tokens, symbols took recall from 0.827 to 0.812
MAX_SYMBOL_FILES = 5
SYMBOL_LINES = 6  # per file
SUBFOLDERS = 5  # shown per top folder
TOP_NAMES_SHARE = 0.08  # the other top folders and the top-level files, by name (yarn.lock, setup.py)


@dataclass(frozen=True)
class RenderedMap:
    text: str
    tokens: int
    files: list[str]  # every file path the map names: the named and ranked ones in order, then the layout's
    with_symbols: int  # how many of them carry their symbols


def render(
    paths: Sequence[str],
    named: Sequence[str],
    ranked: Sequence[str],
    symbols: Callable[[str], list[Symbol]],
    budget: int,
) -> RenderedMap:
    header = f"# Repository map\n\n{len(paths):,} files (not git-ignored ones); those likeliest to matter first."
    layout, top_files = _layout(paths, ranked, int(budget * LAYOUT_SHARE), int(budget * TOP_NAMES_SHARE))
    lines = [header, "", "## Layout (files per folder)", *layout]
    meter = _Meter("\n".join(lines))
    shown: list[str] = []
    detailed = 0
    in_layout = set(top_files)
    order = list(dict.fromkeys([*named, *ranked]))
    section = ""
    with_symbols = budget >= SYMBOLS_FROM
    phase_with_symbols = False  # whether ranked files were offered room for their symbols
    for position, path in enumerate(order):
        block = [path]
        room = detailed < MAX_SYMBOL_FILES and with_symbols and meter.tokens < budget * SYMBOLS_SHARE
        if (path in named or room) and detailed < MAX_SYMBOL_FILES:
            block += _symbol_lines(symbols(path))
            detailed += len(block) > 1
        if len(block) == 1 and path in in_layout and path not in named:
            continue  # the layout names it already
        if path in named:
            wanted = "## Named in the goal"
        elif room or not phase_with_symbols:
            wanted = "## Most relevant files"
            phase_with_symbols = phase_with_symbols or room
        else:
            wanted = "## Also relevant"  # after the files offered room for their symbols
        if wanted != section:
            block.insert(0, f"\n{wanted}")
        if meter.after(block) > budget:
            if position < len(named) and len(block) > 2:  # a named file keeps its path at least
                block = [block[0], path] if block[0].startswith("\n") else [path]
            if meter.after(block) > budget:
                break
        section = wanted
        meter.add(block)
        lines += block
        shown.append(path)
    text = "\n".join(lines)
    shown += [path for path in top_files if path not in shown]
    return RenderedMap(text=text, tokens=estimate_text(text), files=shown, with_symbols=detailed)


class _Meter:
    """The token estimate of a text grown line by line (paicli/llm/tokens.py's rule, for the whole text)."""

    def __init__(self, text: str) -> None:
        self.ascii = len(text.encode("ascii", "ignore"))
        self.other = len(text) - self.ascii

    @property
    def tokens(self) -> int:
        return -(-self.ascii // CHARS_PER_TOKEN) + self.other

    def after(self, lines: list[str]) -> int:
        """The estimate once `lines` are added, each after a line break."""
        more = "".join("\n" + line for line in lines)
        ascii_chars = len(more.encode("ascii", "ignore"))
        return -(-(self.ascii + ascii_chars) // CHARS_PER_TOKEN) + self.other + len(more) - ascii_chars

    def add(self, lines: list[str]) -> None:
        more = "".join("\n" + line for line in lines)
        ascii_chars = len(more.encode("ascii", "ignore"))
        self.ascii += ascii_chars
        self.other += len(more) - ascii_chars


def _symbol_lines(symbols: list[Symbol]) -> list[str]:
    lines: list[str] = []
    for symbol in symbols:
        if len(lines) >= SYMBOL_LINES:
            lines.append(f"  … {len(symbols) - len(lines)} more")
            break
        lines.append(("    " if symbol.depth else "  ") + symbol.signature)
    return lines


def _layout(paths: Sequence[str], ranked: Sequence[str], detail: int, names: int) -> tuple[list[str], list[str]]:
    """The layout's lines and the top-level files they name: every top folder with its file count (the
    biggest with their largest subfolders, within `detail` tokens), then every other top folder and every
    top-level file by name, within `names` tokens (when they do not all fit, the files ranked best for
    the goal stay, and a last "… N more" says what was left out)."""
    top: Counter[str] = Counter()
    sub: dict[str, Counter[str]] = {}
    loose: list[str] = []
    for path in paths:
        parts = path.split("/")
        if len(parts) == 1:
            loose.append(path)
            continue
        top[parts[0]] += 1
        if len(parts) > 2:
            sub.setdefault(parts[0], Counter())[parts[1]] += 1
    lines: list[str] = []
    used = 0
    folders = sorted(top.items(), key=lambda item: (-item[1], item[0]))
    plain: list[str] = []
    for folder, count in folders:
        children = sub.get(folder, Counter()).most_common(SUBFOLDERS)
        line = f"{folder}/ {count}" + (": " + ", ".join(f"{c}/ {n}" for c, n in children) if children else "")
        cost = estimate_text(line) + 1
        if plain or used + cost > detail:
            plain.append(f"{folder}/ {count}")
            continue
        lines.append(line)
        used += cost
    position = {path: at for at, path in enumerate(ranked)}
    by_rank = sorted(loose, key=lambda path: (position.get(path, len(position)), path))
    kept_folders = _within(plain, names)
    kept_files = _within(by_rank, names - estimate_text(", ".join(kept_folders)) - 4)
    if kept_folders:
        left = len(plain) - len(kept_folders)
        lines.append(", ".join(kept_folders) + (f", … {left} more folders" if left else ""))
    if kept_files:
        left = len(loose) - len(kept_files)
        shown = sorted(kept_files)
        lines.append(f"top-level files: {', '.join(shown)}" + (f", … {left} more" if left else ""))
    elif loose:
        lines.append(f"{len(loose)} top-level files")
    return (lines or ["(no files)"]), (sorted(kept_files) if kept_files else [])


def _within(items: list[str], budget: int) -> list[str]:
    """The longest start of `items` that fits in `budget` tokens joined by ", " (all of them when they fit,
    else with room left for a "… N more")."""
    if estimate_text(", ".join(items)) <= budget:
        return items
    kept: list[str] = []
    used = 6  # ", … N more"
    for item in items:
        used += estimate_text(item + ", ")  # rounded up per item: never more than the whole line's estimate
        if used > budget:
            break
        kept.append(item)
    return kept
