"""A short summary of a log."""

from logtool.parse import parse_lines
from logtool.stats import count_formats, count_levels, span


def summary(lines) -> str:
    entries, bad = parse_lines(lines)
    out = [f"entries: {len(entries)}"]
    out += [f"{level}: {count}" for level, count in count_levels(entries).items()]
    period = span(entries)
    if period:
        out.append(f"from {period[0].isoformat()} to {period[1].isoformat()}")
    out.append("formats: " + ", ".join(f"{name} {count}" for name, count in count_formats(entries).items()))
    if bad:
        out.append("unparsed lines: " + ", ".join(map(str, bad)))
    return "\n".join(out)
