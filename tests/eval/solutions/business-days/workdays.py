"""Business-day arithmetic."""

from datetime import timedelta


def _count(start, end, holidays):
    days = (end - start).days
    weeks, rest = divmod(days, 7)
    count = weeks * 5 + sum((start.weekday() + i) % 7 < 5 for i in range(rest))
    return count - sum(start <= h < end and h.weekday() < 5 for h in set(holidays))


def business_days(start, end, holidays=()):
    if end < start:
        return -_count(end, start, holidays)
    return _count(start, end, holidays)


def add_business_days(day, n, holidays=()):
    step = 1 if n >= 0 else -1
    holidays = set(holidays)
    left = abs(n)
    while left:
        day += timedelta(step)
        if day.weekday() < 5 and day not in holidays:
            left -= 1
    return day
