"""Totals and other figures per group."""

import statistics

_OPS = {"sum": sum, "count": len, "mean": statistics.fmean, "min": min, "max": max}


def total_by(rows, key: str, column: str) -> dict:
    totals = {}
    for row in rows:
        totals[row[key]] = totals.get(row[key], 0.0) + row[column]
    return dict(sorted(totals.items()))


def summarize(rows, keys, column, ops) -> list:
    groups = {}
    for row in rows:
        groups.setdefault(tuple(row[k] for k in keys), []).append(row[column])
    result = []
    for group in sorted(groups):
        entry = dict(zip(keys, group))
        entry.update({op: _OPS[op](groups[group]) for op in ops})
        result.append(entry)
    return result
