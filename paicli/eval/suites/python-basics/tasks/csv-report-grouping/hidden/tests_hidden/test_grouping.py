import pytest

from tabular.aggregate import summarize
from tabular.reader import read
from tabular.render import table

CSV = "region,item,amount\nnorth,pen,2\nsouth,pen,3.5\nnorth,ink,4\nnorth,pen,\nnorth,pen,6\n"


def test_reader_skips_empty_numbers():
    rows = read(CSV, numeric=["amount"])
    assert len(rows) == 4 and all(isinstance(r["amount"], float) for r in rows)


def test_reader_names_the_bad_line():
    with pytest.raises(ValueError, match="3"):
        read("a,n\nx,1\ny,lots\n", numeric=["n"])


def test_summarize_two_keys():
    rows = read(CSV, numeric=["amount"])
    assert summarize(rows, ["region", "item"], "amount", ["sum", "count", "mean"]) == [
        {"region": "north", "item": "ink", "sum": 4.0, "count": 1, "mean": 4.0},
        {"region": "north", "item": "pen", "sum": 8.0, "count": 2, "mean": 4.0},
        {"region": "south", "item": "pen", "sum": 3.5, "count": 1, "mean": 3.5},
    ]
    assert summarize(rows, ["region"], "amount", ["min", "max"]) == [
        {"region": "north", "min": 2.0, "max": 6.0},
        {"region": "south", "min": 3.5, "max": 3.5},
    ]


def test_table_aligns_numbers():
    rows = [{"item": "pen", "sum": 8.0, "count": 2}, {"item": "ink", "sum": 14.25, "count": 11}]
    assert table(rows, ["item", "sum", "count"]).splitlines() == [
        "item    sum  count",
        "----  -----  -----",
        "pen    8.00      2",
        "ink   14.25     11",
    ]
