"""A fixed-size FIFO buffer."""


class RingBuffer:
    def __init__(self, capacity):
        self.capacity = capacity
        self._items = [None] * capacity
        self._start = 0
        self._size = 0

    def push(self, item):
        if self._size == self.capacity:
            raise IndexError("buffer full")
        self._items[(self._start + self._size) % self.capacity] = item
        self._size += 1

    def __len__(self):
        return self._size
