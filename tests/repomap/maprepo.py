"""A small generated repository for the map's tests: a few modules that use each other, their tests, an
ignored build/ folder."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.repos import git_init

FILES = {
    "src/shop/cart.py": "from shop.prices import discount_for\n\nclass Cart:\n    def total(self) -> int:\n"
    "        return discount_for(self)\n",
    "src/shop/prices.py": "def discount_for(cart: object) -> int:\n    return 0\n",
    "src/shop/payments.py": "class PaymentGateway:\n    def charge(self, amount: int) -> None:\n        pass\n",
    "src/shop/__init__.py": "",
    "tests/test_cart.py": "from shop.cart import Cart\n\ndef test_total() -> None:\n    assert Cart().total() == 0\n",
    "docs/index.md": "# Shop\n\nA shop with a cart and payments.\n",
    "README.md": "shop\n",
    ".gitignore": "build/\n",
    "build/generated_cart.py": "class GeneratedCart:\n    pass  # cart cart cart\n",
}


def make_repo(folder: Path, *, git: bool = True, extra: dict[str, str] | None = None) -> Path:
    if git:
        git_init(folder)
    for name, text in {**FILES, **(extra or {})}.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    if git:
        subprocess.run(["git", "-C", str(folder), "add", "-A"], check=True, capture_output=True)
    return folder
