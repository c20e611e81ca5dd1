import pytest

from stock.orders import cancel, confirm, place_order, reserve_order
from stock.reports import low_stock
from stock.warehouse import OutOfStock, Warehouse


def stocked():
    w = Warehouse()
    w.receive("a", 5)
    w.receive("b", 2)
    return w


def test_reserve_holds_without_taking():
    w = stocked()
    w.reserve("a", 3, "o1", expires_at=10)
    assert w.available("a") == 2 and w.on_hand["a"] == 5
    with pytest.raises(OutOfStock):
        w.reserve("a", 3, "o2", expires_at=10)


def test_reserve_order_all_or_nothing():
    w = stocked()
    with pytest.raises(OutOfStock):
        reserve_order(w, "o1", {"a": 1, "b": 3}, expires_at=10)
    assert w.available("a") == 5 and w.available("b") == 2
    reserve_order(w, "o1", {"a": 1, "b": 2}, expires_at=10)
    assert w.available("b") == 0


def test_confirm_and_cancel():
    w = stocked()
    reserve_order(w, "o1", {"a": 2}, expires_at=10)
    reserve_order(w, "o2", {"a": 2}, expires_at=10)
    confirm(w, "o1")
    assert w.on_hand["a"] == 3 and w.available("a") == 1
    cancel(w, "o2")
    assert w.on_hand["a"] == 3 and w.available("a") == 3
    assert w.release_expired(100) == []


def test_release_expired():
    w = stocked()
    reserve_order(w, "o2", {"a": 1, "b": 1}, expires_at=5)
    reserve_order(w, "o1", {"a": 1}, expires_at=7)
    reserve_order(w, "o3", {"a": 1}, expires_at=9)
    assert w.release_expired(4) == []
    assert w.release_expired(7) == ["o1", "o2"]
    assert w.available("a") == 4 and w.available("b") == 2


def test_reports_and_orders_see_holds():
    w = stocked()
    reserve_order(w, "o1", {"a": 4}, expires_at=5)
    assert low_stock(w, 2) == [("a", 1), ("b", 2)]
    with pytest.raises(OutOfStock):
        place_order(w, {"a": 2})
