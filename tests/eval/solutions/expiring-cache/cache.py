"""A small cache whose entries expire."""

import time
from collections import OrderedDict


class ExpiringCache:
    def __init__(self, capacity: int, ttl: float, clock=time.monotonic):
        if capacity < 1 or ttl <= 0:
            raise ValueError("capacity must be >= 1 and ttl > 0")
        self.capacity, self.ttl, self.clock = capacity, ttl, clock
        self._entries: OrderedDict = OrderedDict()  # key -> (value, expires_at), least recently used first

    def purge(self) -> int:
        now = self.clock()
        dead = [k for k, (_, expires) in self._entries.items() if expires <= now]
        for key in dead:
            del self._entries[key]
        return len(dead)

    def set(self, key, value) -> None:
        self.purge()
        self._entries.pop(key, None)
        while len(self._entries) >= self.capacity:
            self._entries.popitem(last=False)
        self._entries[key] = (value, self.clock() + self.ttl)

    def get(self, key, default=None):
        entry = self._entries.get(key)
        if entry is None:
            return default
        if entry[1] <= self.clock():
            del self._entries[key]
            return default
        self._entries.move_to_end(key)
        return entry[0]

    def __contains__(self, key) -> bool:
        entry = self._entries.get(key)
        return entry is not None and entry[1] > self.clock()

    def __len__(self) -> int:
        now = self.clock()
        return sum(expires > now for _, expires in self._entries.values())
