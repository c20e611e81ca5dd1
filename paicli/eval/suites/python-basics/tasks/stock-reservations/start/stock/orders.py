"""Orders take stock from the warehouse."""

from stock.warehouse import OutOfStock


def place_order(warehouse, lines) -> None:
    """Take every line (sku -> quantity) or none."""
    for sku, quantity in lines.items():
        if warehouse.on_hand.get(sku, 0) < quantity:
            raise OutOfStock(sku)
    for sku, quantity in lines.items():
        warehouse.take(sku, quantity)
