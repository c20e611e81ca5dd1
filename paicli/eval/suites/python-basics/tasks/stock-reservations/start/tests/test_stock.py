import pytest

from stock.orders import place_order
from stock.reports import low_stock
from stock.warehouse import OutOfStock, Warehouse


def test_orders_take_all_or_nothing():
    w = Warehouse()
    w.receive("a", 5)
    w.receive("b", 1)
    place_order(w, {"a": 2, "b": 1})
    assert w.on_hand == {"a": 3, "b": 0}
    with pytest.raises(OutOfStock):
        place_order(w, {"a": 1, "b": 1})
    assert w.on_hand == {"a": 3, "b": 0}


def test_low_stock():
    w = Warehouse()
    w.receive("a", 5)
    w.receive("b", 2)
    assert low_stock(w, 2) == [("b", 2)]
