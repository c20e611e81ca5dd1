import pytest

from library.catalog import Catalog
from library.loans import BorrowRefused, Ledger
from library.members import Member


def make():
    catalog = Catalog()
    catalog.add("111", "Dune", copies=3)
    catalog.add("222", "Emma")
    members = [Member(1, "Ada"), Member(2, "Bob")]
    return catalog, members, Ledger(catalog, members)


def test_fees():
    _, members, ledger = make()
    ledger.borrow("111", 1, day=0)
    assert ledger.give_back("111", 1, day=14) == 0
    ledger.borrow("111", 1, day=20)
    assert ledger.give_back("111", 1, day=37) == 75 and members[0].balance_cents == 75
    ledger.borrow("222", 2, day=0)
    assert ledger.give_back("222", 2, day=200) == 1000 and members[1].balance_cents == 1000


def test_balance_blocks_borrowing():
    catalog, members, ledger = make()
    members[0].balance_cents = 525
    with pytest.raises(BorrowRefused):
        ledger.borrow("111", 1, day=0)
    assert catalog.available("111") == 3 and issubclass(BorrowRefused, ValueError)
    members[0].pay(25)
    ledger.borrow("111", 1, day=0)
    assert catalog.available("111") == 2


def test_pay():
    member = Member(3, "Cy")
    assert member.balance_cents == 0
    member.balance_cents = 100
    for bad in (0, -5, 101):
        with pytest.raises(ValueError):
            member.pay(bad)
    member.pay(100)
    assert member.balance_cents == 0


def test_overdue():
    _, _, ledger = make()
    ledger.borrow("111", 2, day=0)
    ledger.borrow("222", 1, day=0)
    ledger.borrow("111", 1, day=5)
    assert ledger.overdue(14) == []
    assert ledger.overdue(20) == [(1, "222", 6), (2, "111", 6), (1, "111", 1)]
    ledger.give_back("222", 1, day=20)
    assert ledger.overdue(20) == [(2, "111", 6), (1, "111", 1)]
