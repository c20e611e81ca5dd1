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

import time

from rich.console import Console

from bench.common import Result, median, percentile, rounded
from paicli.common.events import TextDelta
from paicli.ui.chat.markdown_view import markdown as markdown_renderable
from paicli.ui.chat.render import ChatRenderer

NAME = "render"
TITLE = "Rendering a streamed answer"
DELTA = 5
PACE = 500  # characters a second in the paced replay: a fast model (about 125 tokens a second)


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


class CountingNull:
    """A terminal that writes nowhere but counts the writes (a delta that wrote something refreshed the screen)."""

    def __init__(self) -> None:
        self.writes = 0

    def write(self, text: str) -> int:
        self.writes += 1
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return True


class SimulatedClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def terminal() -> tuple[Console, CountingNull]:
    screen = CountingNull()
    return Console(file=screen, force_terminal=True, color_system="truecolor", width=100, height=40), screen  # type: ignore[arg-type]


def stream(text: str, *, preview: bool, paced: bool = False) -> tuple[float, list[float]]:
    """CPU seconds of streaming `text` and ending the turn, and the CPU seconds of each delta that wrote to
    the screen. `paced`: the deltas arrive PACE characters a second apart in simulated time (so the
    preview refreshes as often as it would with a real stream), else as fast as they are handled."""
    events = [TextDelta(task_id=None, text=text[i : i + DELTA]) for i in range(0, len(text), DELTA)]
    console, screen = terminal()
    clock = SimulatedClock()
    renderer = ChatRenderer(console, live_preview=preview, clock=clock if paced else time.monotonic)
    refreshes: list[float] = []
    start = time.process_time()
    for event in events:
        writes, began = screen.writes, time.process_time()
        renderer.emit(event)
        if screen.writes != writes:
            refreshes.append(time.process_time() - began)
        clock.now += DELTA / PACE
    renderer.end_turn()
    return time.process_time() - start, refreshes


def one_render(text: str) -> float:
    """CPU seconds of one rich render of the whole document, as the renderer would print it."""
    console, _ = terminal()
    start = time.process_time()
    console.print(markdown_renderable(text))
    return time.process_time() - start


def run(quick: bool = False) -> Result:
    small, rounds = (10_000, 1) if quick else (100_000, 3)
    texts = {small: markdown(small), 2 * small: markdown(2 * small)}
    kb = small // 1000
    result = Result(NAME, TITLE, details={"delta_chars": DELTA, "rounds": rounds, "pace_chars_per_s": PACE})
    stream(markdown(2_000), preview=True)  # imports and caches of rich and pygments
    singles = []
    for preview, label in ((True, "REPL (live preview)"), (False, "blocks only")):
        times: dict[int, list[float]] = {size: [] for size in texts}
        ratios, to_one = [], []
        for _ in range(rounds if preview else max(1, rounds - 1)):
            for size, text in texts.items():
                times[size].append(stream(text, preview=preview)[0])
            ratios.append(times[2 * small][-1] / times[small][-1])
            singles.append(one_render(texts[small]))
            to_one.append(times[small][-1] / singles[-1])
        result.add(f"{label}: {kb} KB, CPU", median(times[small]), "s", at_most=1.0)
        result.add(f"{label}: {2 * kb} KB ÷ {kb} KB", median(ratios), at_most=2.3)
        result.add(f"{label}: {kb} KB ÷ one render of the whole", median(to_one), at_most=1.3 if preview else None)
        result.details[label] = {f"{size // 1000}_kb_cpu_s": [rounded(t) for t in times[size]] for size in texts}
        result.details[label]["to_one_render"] = [rounded(r) for r in to_one]
    result.add(f"one rich render of the {kb} KB document, CPU", median(singles), "s")
    result.details["one_render_cpu_s"] = [rounded(t) for t in singles]
    total, refreshes = stream(texts[small], preview=True, paced=True)
    ms = [r * 1000 for r in refreshes]
    label = f"paced at {PACE} chars/s, {kb} KB"
    result.add(f"{label}: refreshes", len(ms))
    result.add(f"{label}: refresh p50", percentile(ms, 50), "ms")
    result.add(f"{label}: refresh p99", percentile(ms, 99), "ms", at_most=16.0)
    result.add(f"{label}: refresh max", max(ms), "ms", at_most=50.0)
    result.add(f"{label}: CPU", total, "s")
    result.details["paced"] = {"cpu_s": rounded(total), "refresh_ms": sorted(rounded(v) for v in ms)}
    return result
