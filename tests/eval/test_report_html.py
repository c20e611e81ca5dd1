"""report.html stands alone (inline CSS and SVG, no script, nothing fetched) and shows names from the
records as text, never as markup."""

from __future__ import annotations

import io
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from paicli.eval.report import run_report
from tests.eval.test_report import generated, record, write_jsonl


class Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attributes: list[tuple[str, str | None]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes += attrs

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parsed(path: Path) -> Collect:
    collect = Collect()
    collect.feed(path.read_text(encoding="utf-8"))
    return collect


def test_the_page_is_self_contained_with_charts(tmp_path: Path) -> None:
    folder = write_jsonl(tmp_path / "run", generated(3))
    assert run_report([folder], None, stdout=io.StringIO()) == 0
    page = parsed(folder / "report.html")
    assert "script" not in page.tags and "img" not in page.tags and "link" not in page.tags
    assert page.tags.count("svg") == 3  # pass rates; plan ÷ chat for each of the two models
    assert "style" in page.tags and "rect" in page.tags and "circle" in page.tags
    assert not [value for name, value in page.attributes if name in ("src", "href")]
    assert not re.search(r"https?://", (folder / "report.html").read_text(encoding="utf-8"))
    text = " ".join(page.text)
    assert "m-small" in text and "m-large" in text and "t11" in text


def test_names_from_the_records_are_text_not_markup(tmp_path: Path) -> None:
    hostile = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'
    records = [record("a", "plan", hostile, "pass"), record("a", "chat", hostile, "fail")]
    records[0]["suite"] = records[1]["suite"] = "suite <b>bold</b> | pipe"
    folder = write_jsonl(tmp_path / "run", records)
    terminal = io.StringIO()
    assert run_report([folder], None, stdout=terminal) == 0
    page = parsed(folder / "report.html")
    assert "script" not in page.tags and "img" not in page.tags and "b" not in page.tags
    assert any(hostile[:20] in text for text in page.text)
    markdown = (folder / "report.md").read_text(encoding="utf-8")
    assert "<script>" not in markdown and "\\<script\\>" in markdown and "\\| pipe" in markdown


def test_control_characters_from_the_records_do_not_reach_the_terminal(tmp_path: Path) -> None:
    folder = write_jsonl(tmp_path / "run", [record("a", "plan", "evil\x1b]52;c;AAAA\x07model", "pass")])
    terminal = io.StringIO()
    assert run_report([folder], None, stdout=terminal) == 0
    assert "\x1b" not in terminal.getvalue() and "\x07" not in terminal.getvalue()
    assert "\x1b" not in (folder / "report.md").read_text(encoding="utf-8")


def test_names_are_not_rich_markup_on_the_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # the table's columns unfolded
    folder = write_jsonl(tmp_path / "run", [record("a", "plan", "[red]m[/red]", "pass")])
    folder_records = folder / "results.jsonl"
    folder_records.write_text(folder_records.read_text().replace('"suite": "s"', '"suite": "[bold]s[/bold]"'))
    terminal = io.StringIO()
    assert run_report([folder], None, stdout=terminal) == 0
    assert "[red]m[/red]" in terminal.getvalue() and "[bold]s[/bold]" in terminal.getvalue()
