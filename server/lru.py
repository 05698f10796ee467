"""A small thread-safe least-recently-used map: the server's caches of parsed statements
(server/parser/query_cache.py) and of light plans and constant results (server/short_circuit.py)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Hashable


class Lru:
    def __init__(self, capacity: int):
        self.capacity = capacity
        self._entries: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Any:
        """The value kept for `key` (now the most recently used), or None."""
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
            return found

    def put(self, key: Hashable, value: Any) -> None:
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
