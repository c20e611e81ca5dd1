"""Books and how many copies are on the shelf."""


class Catalog:
    def __init__(self):
        self._titles = {}
        self._on_shelf = {}

    def add(self, isbn: str, title: str, copies: int = 1) -> None:
        self._titles[isbn] = title
        self._on_shelf[isbn] = self._on_shelf.get(isbn, 0) + copies

    def available(self, isbn: str) -> int:
        return self._on_shelf.get(isbn, 0)

    def take(self, isbn: str) -> None:
        if self.available(isbn) < 1:
            raise LookupError(f"no copy of {isbn} on the shelf")
        self._on_shelf[isbn] -= 1

    def put_back(self, isbn: str) -> None:
        self._on_shelf[isbn] += 1
