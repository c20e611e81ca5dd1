"""8. Rendering: a long Markdown answer streamed through the REPL's renderer in 5-character deltas.

The renderer is `ChatRenderer` on a rich Console that believes it is a 100 × 40 colour terminal but
writes to /dev/null. Two configurations: as in the REPL (live preview of the unfinished block, refreshed
at most 8 times a second) and blocks only (each finished block rendered once, no preview). The text
mixes headings, paragraphs, lists, code fences, quotes and small tables, deterministically. CPU time
(this process) of feeding every delta and ending the turn; the events are built beforehand. Three rounds
for the REPL configuration, two for blocks only; medians.
Ratio: CPU(200 KB) ÷ CPU(100 KB) in the same round; linear is 2, quadratic re-rendering would be 4.
"""

from __future__ import annotations

import os
import time

from rich.console import Console

from bench.common import Result, median, rounded
from paicli.events import TextDelta
from paicli.ui.render import ChatRenderer

NAME = "render"
TITLE = "Rendering a streamed answer"
DELTA = 5


def markdown(size: int) -> str:
    """About `size` characters of varied Markdown."""
    blocks: list[str] = []
    total, number = 0, 0
    while total < size:
        kind = number % 6
        if kind == 0:
            block = f"## Part {number}: what changes in module_{number}.py"
        elif kind == 1:
            block = (
                f"The function `load_{number}` reads the **configuration** once and caches it; callers that "
                f"need a fresh copy pass `reload=True`. This keeps startup fast, but tests that change the "
                f"file must reset the cache (see [the docs](https://example.com/{number})), otherwise they "
                f"see stale values and fail in ways that are *hard* to read."
            )
        elif kind == 2:
            block = "\n".join(f"- item {number}.{i}: `value_{i}` is checked before use" for i in range(6))
        elif kind == 3:
            body = "\n".join(f"    total += compute_{i}(items[{i}], limit={i * 3})" for i in range(8))
            block = f"```python\ndef step_{number}(items):\n    total = 0\n{body}\n    return total\n```"
        elif kind == 4:
            block = f"> Note {number}: the old behaviour stays available behind `--legacy` for one release."
        else:
            rows = "\n".join(f"| case {i} | {i * 7} ms | {'ok' if i % 2 else 'slow'} |" for i in range(4))
            block = f"| case | time | verdict |\n|---|---|---|\n{rows}"
        blocks.append(block)
        total += len(block) + 2
        number += 1
    return "\n\n".join(blocks)[:size]


def cpu_seconds(text: str, *, preview: bool) -> float:
    events = [TextDelta(task_id=None, text=text[i : i + DELTA]) for i in range(0, len(text), DELTA)]
    with open(os.devnull, "w", encoding="utf-8") as null:
        console = Console(file=null, force_terminal=True, color_system="truecolor", width=100, height=40)
        renderer = ChatRenderer(console, live_preview=preview)
        start = time.process_time()
        for event in events:
            renderer.emit(event)
        renderer.end_turn()
        return time.process_time() - start


def run(quick: bool = False) -> Result:
    small, rounds = (10_000, 1) if quick else (100_000, 3)
    texts = {small: markdown(small), 2 * small: markdown(2 * small)}
    result = Result(NAME, TITLE, details={"delta_chars": DELTA, "rounds": rounds})
    cpu_seconds(markdown(2_000), preview=True)  # imports and caches of rich and pygments
    for preview, label in ((True, "REPL (live preview)"), (False, "blocks only")):
        times: dict[int, list[float]] = {size: [] for size in texts}
        ratios = []
        for _ in range(rounds if preview else max(1, rounds - 1)):
            for size, text in texts.items():
                times[size].append(cpu_seconds(text, preview=preview))
            ratios.append(times[2 * small][-1] / times[small][-1])
        kb = small // 1000
        result.add(f"{label}: {kb} KB, CPU", median(times[small]), "s", at_most=1.0)
        result.add(f"{label}: {2 * kb} KB ÷ {kb} KB", median(ratios), at_most=2.3)
        result.details[label] = {f"{size // 1000}_kb_cpu_s": [rounded(t) for t in times[size]] for size in texts}
    return result
