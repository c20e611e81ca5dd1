"""Who has which book since when."""

from library.catalog import Catalog


class Ledger:
    def __init__(self, catalog: Catalog, members):
        self.catalog = catalog
        self.members = {member.id: member for member in members}
        self.loans = {}  # (member_id, isbn) -> day borrowed

    def borrow(self, isbn: str, member_id: int, day: int) -> None:
        if member_id not in self.members:
            raise KeyError(member_id)
        if (member_id, isbn) in self.loans:
            raise ValueError("already borrowed")
        self.catalog.take(isbn)
        self.loans[(member_id, isbn)] = day

    def give_back(self, isbn: str, member_id: int, day: int) -> None:
        del self.loans[(member_id, isbn)]
        self.catalog.put_back(isbn)
