"""What needs restocking."""


def low_stock(warehouse, threshold: int) -> list:
    """(sku, quantity) of the SKUs at or below the threshold, by SKU."""
    return [(sku, warehouse.on_hand[sku]) for sku in warehouse.skus() if warehouse.on_hand[sku] <= threshold]
