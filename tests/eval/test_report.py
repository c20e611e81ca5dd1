"""`paicli eval report`: the numbers in report.md and on the terminal are those of the JSONL, computed here
again from the generated records; shards merge, a later record of the same run wins, and a line that cannot
be read is one line on stderr naming the file and line while the rest is still reported."""

from __future__ import annotations

import io
import json
import math
import random
import statistics
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from paicli.eval.records import RunRecord
from paicli.eval.report import run_report, terminal_tables
from paicli.eval.stats import wilson
from paicli.eval.summary import summarize


def record(task: str, mode: str, model: str, outcome: str, repeat: int = 0, **values: Any) -> dict[str, Any]:
    return {
        "suite": "s",
        "task": task,
        "mode": mode,
        "model": model,
        "repeat": repeat,
        "outcome": outcome,
        **values,
    }


def write_jsonl(folder: Path, records: list[dict[str, Any]], extra_lines: tuple[str, ...] = ()) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(r) for r in records] + list(extra_lines)
    (folder / "results.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def md_rows(report: str) -> dict[tuple[str, str], dict[str, str]]:
    """The mode × model rows of report.md's first table, by column name."""
    lines = [line for line in report.splitlines() if line.startswith("| ")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    rows = {}
    for line in lines[1:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) != len(header) or cells[0] not in ("plan", "chat"):
            continue
        row = dict(zip(header, cells, strict=True))
        rows[(row["mode"], row["model"])] = row
    return rows


def wilson_reference(k: int, n: int) -> tuple[float, float]:
    """The Wilson score interval written out as in Wilson (1927), independent of paicli/eval/stats.py."""
    z = 1.96
    p = k / n
    denominator = 1 + z * z / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - spread) / denominator, (centre + spread) / denominator


def test_the_wilson_interval_of_7_in_10_is_the_textbook_one() -> None:
    low, high = wilson(7, 10)
    assert (round(low, 3), round(high, 3)) == (0.397, 0.892)
    assert wilson(0, 5)[0] == 0.0 and wilson(5, 5)[1] == 1.0
    assert wilson(0, 0) == (0.0, 1.0)
    for k, n in ((1, 3), (13, 40), (39, 40)):
        assert wilson(k, n) == pytest.approx(wilson_reference(k, n), abs=1e-3)


def generated(seed: int) -> list[dict[str, Any]]:
    """Two models in two modes over 12 tasks, two repeats: random outcomes, tokens, costs and times."""
    rng = random.Random(seed)
    records = []
    for model in ("m-small", "m-large"):
        for mode in ("plan", "chat"):
            for task in range(12):
                for repeat in range(2):
                    outcome = rng.choice(["pass", "pass", "pass", "fail", "timeout", "over_budget", "error"])
                    records.append(
                        record(
                            f"t{task:02d}",
                            mode,
                            model,
                            outcome,
                            repeat,
                            prompt_tokens=rng.randint(1000, 90_000),
                            completion_tokens=rng.randint(100, 9000),
                            cost=round(rng.uniform(0.001, 0.5), 4) if model == "m-large" else None,
                            wall_s=round(rng.uniform(3, 300), 2),
                        )
                    )
    return records


def test_the_report_numbers_are_those_of_the_jsonl(tmp_path: Path) -> None:
    records = generated(34)
    out, terminal, errors = tmp_path / "out", io.StringIO(), io.StringIO()
    assert run_report([write_jsonl(tmp_path / "run", records)], out, stdout=terminal, stderr=errors) == 0
    assert errors.getvalue() == ""
    report = (out / "report.md").read_text(encoding="utf-8")
    rows = md_rows(report)
    assert set(rows) == {(mode, model) for mode in ("plan", "chat") for model in ("m-small", "m-large")}
    for (mode, model), row in rows.items():
        mine = [r for r in records if r["mode"] == mode and r["model"] == model]
        counted = [r for r in mine if r["outcome"] != "error"]
        passed = sum(r["outcome"] == "pass" for r in counted)
        assert row["runs"] == str(len(mine))
        assert row["errors"] == str(len(mine) - len(counted))
        assert row["passed"].split()[0] == f"{passed}/{len(counted)}"
        assert row["pass rate"] == f"{100 * passed / len(counted):.0f} %"
        low, high = wilson_reference(passed, len(counted))
        assert row["95 % interval"] == f"{100 * low:.0f}–{100 * high:.0f} %"
        tokens = statistics.median(r["prompt_tokens"] + r["completion_tokens"] for r in counted)
        assert 1000 <= tokens < 1_000_000 and row["median tokens"] == f"{round(tokens) / 1000:.1f}k"
        wall = statistics.median(r["wall_s"] for r in counted)
        assert row["median wall"] == (f"{wall / 60:.1f} min" if wall >= 120 else f"{wall:.1f} s")
        if model == "m-large":
            assert row["median cost"] == f"{statistics.median(r['cost'] for r in counted):.4f}"
        else:
            assert row["median cost"] == "—"
    assert "m-small" in terminal.getvalue() and "report.md" in terminal.getvalue()


def paired_reference(records: list[dict[str, Any]], model: str, value: str) -> tuple[int, float]:
    """plan ÷ chat for `model`: per task both modes solved, the ratio of the medians over passing runs."""
    ratios = []
    for task in sorted({r["task"] for r in records}):
        medians = []
        for mode in ("plan", "chat"):
            solved = [r for r in records if (r["task"], r["mode"], r["model"]) == (task, mode, model)]
            solved = [r for r in solved if r["outcome"] == "pass"]
            if not solved:
                break
            get = (lambda r: r["prompt_tokens"] + r["completion_tokens"]) if value == "tokens" else (lambda r: r[value])
            medians.append(statistics.median(get(r) for r in solved))
        if len(medians) == 2:
            ratios.append(medians[0] / medians[1])
    return len(ratios), statistics.median(ratios)


def test_plan_over_chat_is_the_median_of_per_task_ratios_on_tasks_both_solved(tmp_path: Path) -> None:
    records = generated(7)
    out = tmp_path / "out"
    assert run_report([write_jsonl(tmp_path / "run", records)], out, stdout=io.StringIO()) == 0
    report = (out / "report.md").read_text(encoding="utf-8")
    for model in ("m-small", "m-large"):
        (line,) = [row for row in report.splitlines() if row.startswith(f"| {model} |")]
        cells = [c.strip() for c in line.strip("|").split("|")]
        count, tokens = paired_reference(records, model, "tokens")
        assert cells[1] == str(count) and count > 0
        assert cells[2] == f"{tokens:.2f}×"
        assert cells[4] == f"{paired_reference(records, model, 'wall_s')[1]:.2f}×"
        assert cells[3] == (f"{paired_reference(records, model, 'cost')[1]:.2f}×" if model == "m-large" else "—")


def test_shards_merge_and_a_later_record_of_the_same_run_wins(tmp_path: Path) -> None:
    first = [record("a", "plan", "m", "fail"), record("b", "plan", "m", "pass")]
    second = [record("c", "plan", "m", "pass"), record("a", "plan", "m", "pass")]  # `a` redone: now a pass
    dirs = [write_jsonl(tmp_path / "shard-1", first), write_jsonl(tmp_path / "shard-2", second)]
    assert run_report(dirs, tmp_path / "merged", stdout=io.StringIO()) == 0
    row = md_rows((tmp_path / "merged" / "report.md").read_text(encoding="utf-8"))[("plan", "m")]
    assert (row["runs"], row["passed"], row["tasks"]) == ("3", "3/3", "3")


def test_bad_lines_are_named_one_line_each_and_the_rest_is_reported(tmp_path: Path) -> None:
    good = [record("a", "chat", "m", "pass"), record("b", "chat", "m", "fail")]
    folder = write_jsonl(
        tmp_path / "run",
        good[:1],
        extra_lines=("", "{not json", '{"suite": "s", "task": "x"}', "[1, 2]", json.dumps(good[1])),
    )
    errors = io.StringIO()
    assert run_report([folder], None, stdout=io.StringIO(), stderr=errors) == 0
    problems = errors.getvalue().splitlines()
    path = folder / "results.jsonl"
    assert [p.split(": ", 2)[1] for p in problems] == [f"{path}:{n}" for n in (2, 3, 4, 5)]
    assert "empty line" in problems[0] and "not JSON" in problems[1]
    assert "not a run record" in problems[2] and "not a JSON object" in problems[3]
    report = (folder / "report.md").read_text(encoding="utf-8")
    assert md_rows(report)[("chat", "m")]["passed"] == "1/2"
    assert f"{path}:3" in report and f"{path}:3" in (folder / "report.html").read_text(encoding="utf-8")


def test_nothing_to_report_is_a_one_line_error(tmp_path: Path) -> None:
    errors = io.StringIO()
    (tmp_path / "empty").mkdir()
    assert run_report([tmp_path / "empty"], None, stdout=io.StringIO(), stderr=errors) == 2
    assert errors.getvalue().count("\n") == 2  # the folder cannot be read; nothing to report
    assert not (tmp_path / "empty" / "report.md").exists()


def test_errors_are_counted_apart_from_the_pass_rate(tmp_path: Path) -> None:
    records = [record(f"t{i}", "plan", "m", "pass" if i < 7 else "fail") for i in range(10)]
    records += [record("t10", "plan", "m", "error", error="setup failed"), record("t11", "plan", "m", "error")]
    folder = write_jsonl(tmp_path / "run", records)
    assert run_report([folder], None, stdout=io.StringIO()) == 0
    row = md_rows((folder / "report.md").read_text(encoding="utf-8"))[("plan", "m")]
    assert (row["runs"], row["errors"], row["passed"], row["pass rate"]) == ("12", "2", "7/10", "70 %")
    assert row["95 % interval"] == "40–89 %"
    assert "plan ÷ chat" not in (folder / "report.md").read_text(encoding="utf-8")  # chat did not run


@pytest.mark.parametrize("width", [40, 70, 120])
def test_the_terminal_summary_wraps_between_words_and_figures_only(width: int) -> None:
    record = {"suite": "s", "task": "a", "mode": "plan", "model": "a-model-name", "repeat": 0}
    records = [
        RunRecord.model_validate({**record, "task": f"t{n}", "outcome": outcome, "wall_s": 2.0 + n})
        for n, outcome in enumerate(["pass", "timeout", "fail", "pass"])
    ]
    shown = io.StringIO()
    terminal_tables(summarize(records), Console(file=shown, width=width))
    words = " ".join(shown.getvalue().split()).split(" ")
    for whole in ("a-model-name:", "2/4", "(1", "timeout),", "50%", "3.5s"):
        assert whole in words, (width, shown.getvalue())
    assert all(len(line) <= width for line in shown.getvalue().splitlines())
