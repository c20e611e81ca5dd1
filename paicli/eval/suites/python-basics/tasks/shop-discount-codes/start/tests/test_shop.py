from shop.models import Cart, Item
from shop.pricing import subtotal, total
from shop.receipt import render

MUG = Item("m1", "Mug", 450)
PEN = Item("p1", "Pen", 125)


def test_totals():
    cart = Cart()
    cart.add(MUG, 2)
    cart.add(PEN)
    cart.add(PEN)
    assert subtotal(cart) == 1150 and total(cart) == 1242


def test_receipt():
    cart = Cart()
    cart.add(MUG, 2)
    assert render(cart).splitlines() == [
        "2 x Mug                       9.00",
        "Subtotal                      9.00",
        "Tax                           0.72",
        "Total                         9.72",
    ]
