"""What needs restocking."""


def low_stock(warehouse, threshold: int) -> list:
    """(sku, available quantity) of the SKUs at or below the threshold, by SKU."""
    return [(sku, warehouse.available(sku)) for sku in warehouse.skus() if warehouse.available(sku) <= threshold]
