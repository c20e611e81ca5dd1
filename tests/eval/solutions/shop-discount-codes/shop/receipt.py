"""A printable receipt."""

from shop import pricing


def money(cents: int) -> str:
    sign = "-" if cents < 0 else ""
    return f"{sign}{abs(cents) // 100}.{abs(cents) % 100:02d}"


def _line(label: str, cents: int) -> str:
    return f"{label:<24}{money(cents):>10}"


def render(cart) -> str:
    lines = []
    for item, quantity in sorted(cart.lines.values(), key=lambda line: line[0].sku):
        lines.append(_line(f"{quantity} x {item.name}", item.price_cents * quantity))
    amount = pricing.subtotal(cart)
    lines.append(_line("Subtotal", amount))
    off = pricing.discount(cart)
    if off:
        lines.append(_line(f"Discount {cart.code.code}", -off))
    lines.append(_line("Tax", pricing.tax(amount - off)))
    lines.append(_line("Total", pricing.total(cart)))
    return "\n".join(lines)
