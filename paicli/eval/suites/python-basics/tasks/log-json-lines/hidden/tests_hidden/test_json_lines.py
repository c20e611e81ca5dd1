import json

import pytest

from logtool.parse import parse_line, parse_lines
from logtool.report import summary
from logtool.stats import count_formats

JSON_LINE = json.dumps({"ts": "2026-01-02T03:04:07", "level": "warning", "msg": "slow disk"})


def test_json_line():
    entry = parse_line(JSON_LINE)
    assert (entry.level, entry.message, entry.format, entry.time.second) == ("WARNING", "slow disk", "json", 7)
    assert parse_line("2026-01-02T03:04:05 INFO up").format == "text"


@pytest.mark.parametrize("line", ["garbage", "{", '{"ts": "2026-01-02T03:04:07", "level": "loud", "msg": "x"}', "[1]", '{"level": "info"}'])
def test_bad_lines(line):
    with pytest.raises(ValueError):
        parse_line(line)


def test_parse_lines_reports_bad_numbers():
    entries, bad = parse_lines(["2026-01-02T03:04:05 INFO up", "", "nope", JSON_LINE, "{bad"])
    assert len(entries) == 2 and bad == [3, 5]
    assert count_formats(entries) == {"json": 1, "text": 1}


def test_summary_mentions_formats_and_bad_lines():
    lines = ["2026-01-02T03:04:05 INFO up", JSON_LINE, "oops", JSON_LINE.replace("slow", "very slow")]
    assert summary(lines).splitlines() == [
        "entries: 3",
        "INFO: 1",
        "WARNING: 2",
        "from 2026-01-02T03:04:05 to 2026-01-02T03:04:07",
        "formats: json 2, text 1",
        "unparsed lines: 3",
    ]
