"""Interval arithmetic."""


def merge(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
    for start, end in intervals:
        if start > end:
            raise ValueError(f"({start}, {end}) ends before it starts")
    merged: list[tuple[int, int]] = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def total_length(intervals: list[tuple[int, int]]) -> int:
    return sum(end - start for start, end in merge(intervals))
