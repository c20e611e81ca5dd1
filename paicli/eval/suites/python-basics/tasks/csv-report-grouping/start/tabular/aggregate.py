"""Totals per group."""


def total_by(rows, key: str, column: str) -> dict:
    totals = {}
    for row in rows:
        totals[row[key]] = totals.get(row[key], 0.0) + row[column]
    return dict(sorted(totals.items()))
