import random
from datetime import date, timedelta

from workdays import add_business_days, business_days


def brute(start, end, holidays=()):
    sign = 1
    if end < start:
        start, end, sign = end, start, -1
    days = (start + timedelta(i) for i in range((end - start).days))
    return sign * sum(d.weekday() < 5 and d not in holidays for d in days)


def test_examples():
    monday = date(2026, 3, 2)
    assert business_days(monday, monday + timedelta(7)) == 5
    assert business_days(monday, monday) == 0
    assert business_days(monday + timedelta(7), monday) == -5
    assert business_days(monday, monday + timedelta(7), holidays={date(2026, 3, 4), date(2026, 3, 7)}) == 4


def test_against_brute_force():
    rng = random.Random(11)
    for _ in range(300):
        a = date(2020, 1, 1) + timedelta(rng.randint(0, 900))
        b = a + timedelta(rng.randint(-40, 40))
        holidays = {a + timedelta(rng.randint(-40, 40)) for _ in range(3)}
        assert business_days(a, b, holidays) == brute(a, b, holidays)


def test_long_range():
    assert business_days(date(1900, 1, 1), date(2100, 1, 1)) == brute(date(1900, 1, 1), date(2100, 1, 1))


def test_add():
    friday = date(2026, 3, 6)
    assert add_business_days(friday, 1) == date(2026, 3, 9)
    assert add_business_days(friday, -5) == date(2026, 2, 27)
    assert add_business_days(date(2026, 3, 7), 0) == date(2026, 3, 7)
    assert add_business_days(friday, 1, holidays={date(2026, 3, 9)}) == date(2026, 3, 10)
    assert add_business_days(date(2026, 3, 8), 1) == date(2026, 3, 9)
    assert add_business_days(date(2026, 3, 7), -1) == friday
