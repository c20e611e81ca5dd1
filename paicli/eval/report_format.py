"""How the report's figures are written, the same in Markdown, HTML and on the terminal: one place."""

from __future__ import annotations

from paicli.app.figures import compact_count
from paicli.eval.summary import GroupSummary

MISSING = "—"


def percent(value: float | None) -> str:
    return MISSING if value is None else f"{100 * value:.0f} %"


def interval(group: GroupSummary) -> str:
    if not group.counted:
        return MISSING
    low, high = group.interval
    return f"{100 * low:.0f}–{100 * high:.0f} %"


def tokens(value: float | None) -> str:
    """As paicli shows token counts everywhere (`532`, `12.3k`, `1.2M`)."""
    return MISSING if value is None else compact_count(round(value))


def cost(value: float | None) -> str:
    if value is None:
        return MISSING
    return f"{value:.4f}" if value < 1 else f"{value:.2f}"


def seconds(value: float | None) -> str:
    if value is None:
        return MISSING
    if value >= 120:
        return f"{value / 60:.1f} min"
    return f"{value:.1f} s"


def times(value: float | None) -> str:
    return MISSING if value is None else f"{value:.2f}×"


def outcome_counts(group: GroupSummary) -> str:
    """`7/10` passed of the counted runs, with the timeouts and over-budget runs among the failures named."""
    text = f"{group.passed}/{group.counted}"
    extra = [
        f"{count} {label}"
        for count, label in ((group.timeouts, "timeout"), (group.over_budget, "over budget"))
        if count
    ]
    return text + (f" ({', '.join(extra)})" if extra else "")


GROUP_COLUMNS = (
    "mode",
    "model",
    "tasks",
    "runs",
    "errors",
    "passed",
    "pass rate",
    "95 % interval",
    "median tokens",
    "median cost",
    "median wall",
)
PAIRED_COLUMNS = ("model", "tasks both solved", "tokens plan÷chat", "cost plan÷chat", "wall plan÷chat")


def group_row(group: GroupSummary) -> tuple[str, ...]:
    """The cells of one mode × model row, untrusted names as they are (each view escapes them its way)."""
    return (
        group.mode,
        group.model,
        str(group.tasks),
        str(group.runs),
        str(group.errors),
        outcome_counts(group),
        percent(group.pass_rate),
        interval(group),
        tokens(group.median_tokens),
        cost(group.median_cost),
        seconds(group.median_wall_s),
    )
