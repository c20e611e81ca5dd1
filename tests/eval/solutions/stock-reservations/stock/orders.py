"""Orders take stock from the warehouse, at once or after a reservation."""

from stock.warehouse import OutOfStock


def place_order(warehouse, lines) -> None:
    """Take every line (sku -> quantity) or none."""
    for sku, quantity in lines.items():
        if warehouse.available(sku) < quantity:
            raise OutOfStock(sku)
    for sku, quantity in lines.items():
        warehouse.take(sku, quantity)


def reserve_order(warehouse, order_id, lines, expires_at) -> None:
    try:
        for sku, quantity in lines.items():
            warehouse.reserve(sku, quantity, order_id, expires_at)
    except OutOfStock:
        warehouse.drop_holds(order_id)
        raise


def confirm(warehouse, order_id) -> None:
    for _, sku, quantity, _ in warehouse.drop_holds(order_id):
        warehouse.take(sku, quantity)


def cancel(warehouse, order_id) -> None:
    warehouse.drop_holds(order_id)
