"""Accounts."""

from decimal import Decimal


class InsufficientFunds(ValueError):
    pass


def _amount(amount):
    if isinstance(amount, float) or not isinstance(amount, (int, Decimal)):
        raise TypeError("amounts are Decimal or int")
    amount = Decimal(amount)
    if amount <= 0:
        raise ValueError("amounts must be positive")
    return amount


class Account:
    def __init__(self, owner, overdraft_limit=0):
        self.owner = owner
        self.overdraft_limit = Decimal(overdraft_limit)
        self.balance = Decimal("0")
        self.history = []

    def _change(self, kind, amount, sign):
        self.balance += sign * amount
        self.history.append((kind, amount, self.balance))

    def _check_withdraw(self, amount):
        if self.balance - amount < -self.overdraft_limit:
            raise InsufficientFunds(f"{self.owner} cannot pay {amount}")

    def deposit(self, amount):
        self._change("deposit", _amount(amount), 1)

    def withdraw(self, amount):
        amount = _amount(amount)
        self._check_withdraw(amount)
        self._change("withdraw", amount, -1)


def transfer(source, target, amount):
    amount = _amount(amount)
    source._check_withdraw(amount)
    source._change("transfer-out", amount, -1)
    target._change("transfer-in", amount, 1)
