from logtool.parse import parse_line
from logtool.report import summary

LINES = [
    "2026-01-02T03:04:05 INFO started",
    "2026-01-02T03:04:09 ERROR disk full: /var",
    "",
    "2026-01-02T03:05:00 INFO stopped",
]


def test_parse_line():
    entry = parse_line(LINES[1])
    assert entry.level == "ERROR" and entry.message == "disk full: /var" and entry.time.minute == 4


def test_summary():
    assert summary(LINES).splitlines()[:4] == [
        "entries: 3",
        "ERROR: 1",
        "INFO: 2",
        "from 2026-01-02T03:04:05 to 2026-01-02T03:05:00",
    ]
