"""A short summary of a log."""

from logtool.parse import parse_line
from logtool.stats import count_levels, span


def summary(lines) -> str:
    entries = [parse_line(line) for line in lines if line.strip()]
    out = [f"entries: {len(entries)}"]
    out += [f"{level}: {count}" for level, count in count_levels(entries).items()]
    period = span(entries)
    if period:
        out.append(f"from {period[0].isoformat()} to {period[1].isoformat()}")
    return "\n".join(out)
