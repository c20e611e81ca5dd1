"""The report as one self-contained HTML page (report.html): inline CSS and inline SVG charts, no script,
no font or image from anywhere. Every name in it comes from the records (untrusted): it is escaped.

Per suite: a card per mode × model (pass rate, interval, medians), the pass rates with their 95 % Wilson
intervals as bars and whiskers, plan ÷ chat per model on a log scale (each task a dot, the median a
diamond), the table, and a grid of every task's outcome per mode × model."""

from __future__ import annotations

import html
import math

from paicli.common.sanitize import one_line
from paicli.common.wording import counted
from paicli.eval import report_format as fmt
from paicli.eval.summary import GroupSummary, PairedRatios, Summary, TaskCell

COLOURS = {"plan": "#2f6fdb", "chat": "#e07b20"}
OTHER_COLOUR = "#7a7a7a"
# nothing but the page's own styles: no script, no request anywhere, whatever a record held
CSP = "default-src 'none'; style-src 'unsafe-inline'"
RATIO_SPAN = 3  # the ratio axis runs from 1/2**3 to 2**3; ratios outside are drawn at its edge

CSS = """
:root { --ink:#1d2330; --muted:#667085; --line:#e4e7ec; --bg:#f7f8fa; --card:#fff; }
* { box-sizing:border-box; }
body { margin:0; font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif; color:var(--ink);
  background:var(--bg); }
main { max-width:1100px; margin:0 auto; padding:32px 24px 64px; }
h1 { font-size:28px; margin:0 0 4px; } h2 { font-size:22px; margin:40px 0 12px; }
h3 { font-size:16px; margin:28px 0 8px; color:var(--muted); text-transform:uppercase; letter-spacing:.04em; }
.lede { color:var(--muted); margin:0 0 24px; }
.cards { display:grid; grid-template-columns:repeat(auto-fill,minmax(230px,1fr)); gap:14px; }
.card { background:var(--card); border:1px solid var(--line); border-radius:12px; padding:16px 18px;
  border-top:5px solid var(--accent); }
.card .who { font-weight:600; overflow-wrap:anywhere; } .card .mode { color:var(--accent); font-weight:700; }
.card .big { font-size:36px; font-weight:700; line-height:1.1; margin:8px 0 0; }
.card .sub { color:var(--muted); font-size:13px; }
.card dl { display:grid; grid-template-columns:auto 1fr; gap:2px 12px; margin:12px 0 0; font-size:13px; }
.card dt { color:var(--muted); } .card dd { margin:0; text-align:right; font-variant-numeric:tabular-nums; }
.panel { background:var(--card); border:1px solid var(--line); border-radius:12px; padding:16px; overflow-x:auto; }
svg text { font-family:inherit; fill:var(--ink); } svg .muted { fill:var(--muted); }
table { border-collapse:collapse; width:100%; font-size:13px; font-variant-numeric:tabular-nums; }
th, td { padding:6px 10px; border-bottom:1px solid var(--line); text-align:right; white-space:nowrap; }
th:nth-child(-n+2), td:nth-child(-n+2) { text-align:left; } th { color:var(--muted); font-weight:600; }
.grid td, .grid th { text-align:center; padding:3px 6px; } .grid td:first-child { text-align:left; }
.grid .c { display:inline-block; width:22px; height:18px; border-radius:4px; }
.ok { background:#2e9e5b; } .some { background:#e6b531; } .no { background:#d9534f; } .err { background:#9aa3b2; }
.none { background:#eceff3; }
.legend span { margin-right:14px; font-size:13px; color:var(--muted); }
.legend .c { width:12px; height:12px; vertical-align:-1px; margin-right:4px; display:inline-block; border-radius:3px; }
.problems li { font-family:ui-monospace,monospace; font-size:12px; overflow-wrap:anywhere; }
"""


def esc(text: str, limit: int = 200) -> str:
    return html.escape(one_line(text, limit), quote=True)


def colour(mode: str) -> str:
    return COLOURS.get(mode, OTHER_COLOUR)


def _card(group: GroupSummary) -> str:
    facts = (
        ("passed", fmt.outcome_counts(group)),
        ("errors (not counted)", str(group.errors)),
        ("median tokens", fmt.tokens(group.median_tokens)),
        ("median cost", fmt.cost(group.median_cost)),
        ("median wall", fmt.seconds(group.median_wall_s)),
    )
    rows = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in facts)
    return (
        f'<div class="card" style="--accent:{colour(group.mode)}"><div><span class="mode">{esc(group.mode)}</span>'
        f' · <span class="who">{esc(group.model)}</span></div>'
        f'<div class="big">{esc(fmt.percent(group.pass_rate))}</div>'
        f'<div class="sub">95 % interval {esc(fmt.interval(group))}</div><dl>{rows}</dl></div>'
    )


def pass_rate_chart(groups: list[GroupSummary]) -> str:
    """Horizontal bars, one per mode × model: the pass rate, and the Wilson interval as a whisker."""
    label_w, plot_w, row_h, top = 260, 560, 34, 26
    height = top + row_h * len(groups) + 28
    parts = [f'<svg viewBox="0 0 {label_w + plot_w + 70} {height}" width="100%" role="img" aria-label="pass rates">']
    for tick in range(0, 101, 25):
        x = label_w + plot_w * tick / 100
        parts.append(f'<line x1="{x}" y1="{top - 6}" x2="{x}" y2="{height - 22}" stroke="#e4e7ec"/>')
        parts.append(
            f'<text x="{x}" y="{height - 6}" text-anchor="middle" font-size="12" class="muted">{tick} %</text>'
        )
    for index, group in enumerate(groups):
        y = top + index * row_h
        label = f"{group.mode} · {group.model}"
        parts.append(f'<text x="{label_w - 10}" y="{y + 18}" text-anchor="end" font-size="13">{esc(label, 40)}</text>')
        if group.pass_rate is None:
            parts.append(f'<text x="{label_w + 6}" y="{y + 18}" font-size="12" class="muted">no counted run</text>')
            continue
        low, high = group.interval
        width = plot_w * group.pass_rate
        tip = f"{label}: {fmt.percent(group.pass_rate)} ({fmt.outcome_counts(group)}), 95 % {fmt.interval(group)}"
        parts.append(
            f'<rect x="{label_w}" y="{y + 6}" width="{width:.1f}" height="18" rx="4" fill="{colour(group.mode)}" '
            f'opacity="0.85"><title>{esc(tip, 300)}</title></rect>'
        )
        x1, x2, mid = label_w + plot_w * low, label_w + plot_w * high, y + 15
        parts.append(f'<line x1="{x1:.1f}" y1="{mid}" x2="{x2:.1f}" y2="{mid}" stroke="#1d2330" stroke-width="1.5"/>')
        for x in (x1, x2):
            parts.append(
                f'<line x1="{x:.1f}" y1="{mid - 7}" x2="{x:.1f}" y2="{mid + 7}" stroke="#1d2330" stroke-width="1.5"/>'
            )
        parts.append(
            f'<text x="{label_w + plot_w + 8}" y="{y + 19}" font-size="13" font-weight="600">'
            f"{esc(fmt.percent(group.pass_rate))}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _ratio_x(value: float, left: float, width: float) -> float:
    clamped = min(max(math.log2(value), -RATIO_SPAN), RATIO_SPAN)
    return left + width * (clamped + RATIO_SPAN) / (2 * RATIO_SPAN)


def ratio_chart(paired: PairedRatios) -> str:
    """plan ÷ chat for one model on a log axis: each task a dot, the median a diamond, 1× a line."""
    label_w, plot_w, row_h, top = 110, 620, 40, 30
    metrics = (("tokens", "tokens"), ("cost", "cost"), ("wall_s", "wall time"))
    height = top + row_h * len(metrics) + 34
    parts = [f'<svg viewBox="0 0 {label_w + plot_w + 90} {height}" width="100%" role="img" aria-label="plan ÷ chat">']
    for power in range(-RATIO_SPAN, RATIO_SPAN + 1):
        x = _ratio_x(2.0**power, label_w, plot_w)
        text = f"{2**power}×" if power >= 0 else f"1/{2**-power}"
        stroke = "#98a2b3" if power == 0 else "#e4e7ec"
        parts.append(f'<line x1="{x:.1f}" y1="{top - 8}" x2="{x:.1f}" y2="{height - 28}" stroke="{stroke}"/>')
        parts.append(
            f'<text x="{x:.1f}" y="{height - 12}" text-anchor="middle" font-size="12" class="muted">{text}</text>'
        )
    parts.append(f'<text x="{label_w}" y="14" font-size="12" class="muted">← plan spends less</text>')
    parts.append(
        f'<text x="{label_w + plot_w}" y="14" font-size="12" text-anchor="end" class="muted">chat spends less →</text>'
    )
    for index, (attribute, label) in enumerate(metrics):
        y = top + index * row_h + row_h / 2
        parts.append(f'<text x="{label_w - 12}" y="{y + 4}" text-anchor="end" font-size="13">{label}</text>')
        for task in paired.per_task:
            value = getattr(task, attribute)
            if value is None or value <= 0:
                continue
            x = _ratio_x(value, label_w, plot_w)
            tip = f"{task.task}: {fmt.times(value)}"
            parts.append(
                f'<circle cx="{x:.1f}" cy="{y}" r="5" fill="{COLOURS["plan"]}" opacity="0.35">'
                f"<title>{esc(tip)}</title></circle>"
            )
        median = getattr(paired, attribute)
        if median is None or median <= 0:
            parts.append(f'<text x="{label_w + 6}" y="{y + 4}" font-size="12" class="muted">no data</text>')
            continue
        x = _ratio_x(median, label_w, plot_w)
        parts.append(
            f'<path d="M{x:.1f},{y - 9} l9,9 l-9,9 l-9,-9 z" fill="#1d2330"><title>median {fmt.times(median)}'
            "</title></path>"
        )
        parts.append(
            f'<text x="{label_w + plot_w + 10}" y="{y + 5}" font-size="13" font-weight="600">{fmt.times(median)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _table(groups: list[GroupSummary]) -> str:
    head = "".join(f"<th>{esc(c)}</th>" for c in fmt.GROUP_COLUMNS)
    rows = "".join("<tr>" + "".join(f"<td>{esc(v)}</td>" for v in fmt.group_row(g)) + "</tr>" for g in groups)
    return f'<div class="panel"><table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>'


def _cell_class(cell: TaskCell | None) -> tuple[str, str]:
    if cell is None:
        return "none", "not run"
    if cell.counted == 0:
        return "err", counted(cell.errors, "error run")
    kind = "ok" if cell.passed == cell.counted else "no" if cell.passed == 0 else "some"
    return kind, f"{cell.passed}/{cell.counted} passed" + (f", {counted(cell.errors, 'error')}" if cell.errors else "")


def task_grid(summary: Summary, suite: str, groups: list[GroupSummary]) -> str:
    head = "".join(f'<th title="{esc(g.model)}">{esc(g.mode)}<br>{esc(g.model, 24)}</th>' for g in groups)
    rows = []
    for task in summary.tasks[suite]:
        cells = []
        for group in groups:
            kind, text = _cell_class(summary.cells.get((suite, task, group.mode, group.model)))
            cells.append(
                f'<td><span class="c {kind}" title="{esc(task)} · {esc(group.mode)}: {esc(text)}"></span></td>'
            )
        rows.append(f"<tr><td>{esc(task, 60)}</td>{''.join(cells)}</tr>")
    legend = "".join(
        f'<span><i class="c {k}"></i>{t}</span>'
        for k, t in (("ok", "all passed"), ("some", "some passed"), ("no", "none passed"), ("err", "error"))
    )
    return (
        f'<div class="panel"><p class="legend">{legend}</p><table class="grid"><thead><tr><th>task</th>{head}'
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def page(summary: Summary, problems: list[str]) -> str:
    body = [
        "<h1>paicli eval report</h1>",
        f'<p class="lede">{summary.runs} runs. Pass rates leave out <em>error</em> runs (the task could not be '
        "started fairly); timeouts and runs over the token limit count as failures. Medians are over the "
        "counted runs; plan ÷ chat is the median of per-task ratios on the tasks both modes solved.</p>",
    ]
    for suite, task_ids in summary.tasks.items():
        groups = [g for g in summary.groups if g.suite == suite]
        body.append(f"<h2>Suite {esc(suite)} <small class='sub'>({len(task_ids)} tasks)</small></h2>")
        body.append('<div class="cards">' + "".join(_card(g) for g in groups) + "</div>")
        body.append("<h3>Pass rate with 95 % interval</h3>")
        body.append(f'<div class="panel">{pass_rate_chart(groups)}</div>')
        for paired in (p for p in summary.paired if p.suite == suite):
            body.append(
                f"<h3>plan ÷ chat · {esc(paired.model)} · {paired.both_solved} tasks both solved</h3>"
                f'<div class="panel">{ratio_chart(paired)}</div>'
            )
        body.append("<h3>Table</h3>" + _table(groups))
        body.append("<h3>Every task</h3>" + task_grid(summary, suite, groups))
    if problems:
        items = "".join(f"<li>{esc(p, 400)}</li>" for p in problems)
        body.append(f'<h2>Lines that were not read</h2><ul class="problems">{items}</ul>')
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        f"<title>paicli eval report</title><style>{CSS}</style></head>"
        f"<body><main>{''.join(body)}</main></body></html>\n"
    )
