from decimal import Decimal

import pytest

from bank import Account, InsufficientFunds, transfer


def test_deposit_withdraw_history():
    a = Account("ann")
    a.deposit(Decimal("10.50"))
    a.deposit(5)
    a.withdraw(Decimal("0.50"))
    assert a.balance == Decimal("15.00") and isinstance(a.balance, Decimal)
    assert a.history == [
        ("deposit", Decimal("10.50"), Decimal("10.50")),
        ("deposit", Decimal("5"), Decimal("15.50")),
        ("withdraw", Decimal("0.50"), Decimal("15.00")),
    ]


def test_refusals():
    a = Account("ann")
    for bad in (0, -1, Decimal("-2")):
        with pytest.raises(ValueError):
            a.deposit(bad)
    with pytest.raises(TypeError):
        a.deposit(1.5)
    with pytest.raises(InsufficientFunds):
        a.withdraw(1)
    assert issubclass(InsufficientFunds, ValueError) and a.balance == 0 and a.history == []


def test_overdraft():
    a = Account("bob", overdraft_limit=Decimal("100"))
    a.withdraw(100)
    assert a.balance == -100
    with pytest.raises(InsufficientFunds):
        a.withdraw(Decimal("0.01"))


def test_transfer_all_or_nothing():
    a, b = Account("ann"), Account("bob")
    a.deposit(50)
    transfer(a, b, Decimal("20"))
    assert (a.balance, b.balance) == (30, 20)
    assert a.history[-1] == ("transfer-out", Decimal("20"), Decimal("30"))
    assert b.history[-1] == ("transfer-in", Decimal("20"), Decimal("20"))
    with pytest.raises(InsufficientFunds):
        transfer(a, b, 31)
    assert (a.balance, b.balance) == (30, 20) and len(a.history) == 2 and len(b.history) == 1
    with pytest.raises(ValueError):
        transfer(a, b, 0)
