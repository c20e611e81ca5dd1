"""A fixed-size FIFO buffer."""


class RingBuffer:
    def __init__(self, capacity, overwrite=False):
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self.overwrite = overwrite
        self._items = [None] * capacity
        self._start = 0
        self._size = 0

    def push(self, item):
        dropped = None
        if self._size == self.capacity:
            if not self.overwrite:
                raise IndexError("buffer full")
            dropped = self.pop()
        self._items[(self._start + self._size) % self.capacity] = item
        self._size += 1
        return dropped

    def peek(self):
        if not self._size:
            raise IndexError("buffer empty")
        return self._items[self._start]

    def pop(self):
        item = self.peek()
        self._items[self._start] = None
        self._start = (self._start + 1) % self.capacity
        self._size -= 1
        return item

    def clear(self):
        self._items = [None] * self.capacity
        self._start = self._size = 0

    def __iter__(self):
        return (self._items[(self._start + i) % self.capacity] for i in range(self._size))

    def __len__(self):
        return self._size

    def __repr__(self):
        return f"RingBuffer({list(self)!r}, capacity={self.capacity})"
