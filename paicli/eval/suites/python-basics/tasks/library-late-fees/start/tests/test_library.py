import pytest

from library.catalog import Catalog
from library.loans import Ledger
from library.members import Member


def make():
    catalog = Catalog()
    catalog.add("111", "Dune", copies=2)
    return catalog, Ledger(catalog, [Member(1, "Ada"), Member(2, "Bob")])


def test_borrow_and_give_back():
    catalog, ledger = make()
    ledger.borrow("111", 1, day=0)
    ledger.borrow("111", 2, day=0)
    assert catalog.available("111") == 0
    with pytest.raises(LookupError):
        catalog.take("111")
    ledger.give_back("111", 1, day=3)
    assert catalog.available("111") == 1


def test_no_double_loan():
    _, ledger = make()
    ledger.borrow("111", 1, day=0)
    with pytest.raises(ValueError):
        ledger.borrow("111", 1, day=1)
