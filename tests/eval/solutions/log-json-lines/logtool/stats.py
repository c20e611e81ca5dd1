"""Counting entries."""

from collections import Counter


def count_levels(entries) -> dict:
    counts = Counter(entry.level for entry in entries)
    return {level: counts[level] for level in sorted(counts)}


def count_formats(entries) -> dict:
    counts = Counter(entry.format for entry in entries)
    return {name: counts[name] for name in sorted(counts)}


def span(entries):
    times = [entry.time for entry in entries]
    return (min(times), max(times)) if times else None
