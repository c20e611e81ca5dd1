"""Prices of a cart, in cents."""

TAX_PERCENT = 8


def subtotal(cart) -> int:
    return sum(item.price_cents * quantity for item, quantity in cart.lines.values())


def discount(cart) -> int:
    return cart.code.discount_for(subtotal(cart)) if cart.code else 0


def tax(cents: int) -> int:
    return (cents * TAX_PERCENT + 50) // 100


def total(cart) -> int:
    amount = subtotal(cart) - discount(cart)
    return amount + tax(amount)
