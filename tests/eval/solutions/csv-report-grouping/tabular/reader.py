"""Reading CSV text into rows (dicts); numeric columns become floats."""

import csv
import io


def read(text: str, numeric=()) -> list:
    rows = []
    reader = csv.DictReader(io.StringIO(text))
    for row in reader:
        line = reader.line_num
        if any(not (row[c] or "").strip() for c in numeric):
            continue
        for column in numeric:
            try:
                row[column] = float(row[column])
            except ValueError:
                raise ValueError(f"line {line}: {column} is not a number: {row[column]!r}") from None
        rows.append(row)
    return rows
