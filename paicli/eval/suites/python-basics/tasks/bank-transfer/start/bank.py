"""Accounts."""

from decimal import Decimal


class Account:
    def __init__(self, owner):
        self.owner = owner
        self.balance = Decimal("0")

    def deposit(self, amount):
        self.balance += amount
