import dataclasses

import pytest

from shop.discounts import DiscountCode
from shop.models import Cart, Item
from shop.pricing import discount, subtotal, total
from shop.receipt import render

MUG = Item("m1", "Mug", 450)


def cart_of(n):
    cart = Cart()
    cart.add(MUG, n)
    return cart


def test_codes_validate():
    for kwargs in ({}, {"percent": 10, "amount_cents": 100}, {"percent": 0}, {"percent": 101}, {"amount_cents": -5}):
        with pytest.raises(ValueError):
            DiscountCode("X", **kwargs)
    with pytest.raises(dataclasses.FrozenInstanceError):
        DiscountCode("X", percent=5).percent = 6


def test_discount_for():
    assert DiscountCode("P", percent=15).discount_for(999) == 149
    assert DiscountCode("A", amount_cents=500).discount_for(300) == 300
    assert DiscountCode("M", percent=10, min_subtotal_cents=1000).discount_for(999) == 0


def test_cart_pricing_with_code():
    cart = cart_of(2)
    assert cart.code is None and discount(cart) == 0
    cart.apply_code(DiscountCode("SAVE10", percent=10))
    assert discount(cart) == 90 and subtotal(cart) == 900 and total(cart) == 810 + 65
    cart.apply_code(DiscountCode("FIVE", amount_cents=500))
    assert discount(cart) == 500 and total(cart) == 400 + 32


def test_receipt_shows_the_discount():
    cart = cart_of(2)
    cart.apply_code(DiscountCode("SAVE10", percent=10))
    assert render(cart).splitlines() == [
        "2 x Mug                       9.00",
        "Subtotal                      9.00",
        "Discount SAVE10              -0.90",
        "Tax                           0.65",
        "Total                         8.75",
    ]


def test_no_line_without_a_discount():
    cart = cart_of(1)
    cart.apply_code(DiscountCode("BIG", percent=50, min_subtotal_cents=10_000))
    assert "Discount" not in render(cart) and total(cart) == 486
