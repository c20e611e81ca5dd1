"""Who has which book since when, and what lateness costs."""

from library.catalog import Catalog

LOAN_DAYS = 14
FEE_PER_DAY = 25
FEE_CAP = 1000
BALANCE_LIMIT = 500


class BorrowRefused(ValueError):
    pass


class Ledger:
    def __init__(self, catalog: Catalog, members):
        self.catalog = catalog
        self.members = {member.id: member for member in members}
        self.loans = {}  # (member_id, isbn) -> day borrowed

    def borrow(self, isbn: str, member_id: int, day: int) -> None:
        if member_id not in self.members:
            raise KeyError(member_id)
        if self.members[member_id].balance_cents > BALANCE_LIMIT:
            raise BorrowRefused(f"member {member_id} owes {self.members[member_id].balance_cents}")
        if (member_id, isbn) in self.loans:
            raise ValueError("already borrowed")
        self.catalog.take(isbn)
        self.loans[(member_id, isbn)] = day

    def give_back(self, isbn: str, member_id: int, day: int) -> int:
        borrowed = self.loans.pop((member_id, isbn))
        self.catalog.put_back(isbn)
        fee = min(FEE_CAP, max(0, day - borrowed - LOAN_DAYS) * FEE_PER_DAY)
        self.members[member_id].balance_cents += fee
        return fee

    def overdue(self, day: int) -> list:
        late = [
            (member_id, isbn, day - borrowed - LOAN_DAYS)
            for (member_id, isbn), borrowed in self.loans.items()
            if day - borrowed > LOAN_DAYS
        ]
        return sorted(late, key=lambda row: (-row[2], row[0], row[1]))
