from tabular.aggregate import total_by
from tabular.reader import read
from tabular.render import table

CSV = "region,item,amount\nnorth,pen,2\nsouth,pen,3.5\nnorth,ink,4\n"


def test_read_and_total():
    rows = read(CSV, numeric=["amount"])
    assert rows[1] == {"region": "south", "item": "pen", "amount": 3.5}
    assert total_by(rows, "region", "amount") == {"north": 6.0, "south": 3.5}


def test_table_text_columns():
    rows = [{"name": "ann", "team": "red"}, {"name": "bo", "team": "blue"}]
    assert table(rows, ["name", "team"]).splitlines() == ["name  team", "----  ----", "ann   red", "bo    blue"]
