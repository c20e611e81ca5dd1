"""Reading CSV text into rows (dicts); numeric columns become floats."""

import csv
import io


def read(text: str, numeric=()) -> list:
    rows = []
    for row in csv.DictReader(io.StringIO(text)):
        for column in numeric:
            row[column] = float(row[column])
        rows.append(row)
    return rows
