"""StoragePageCache: decoded data pages kept in memory across scans, bounded, least recently
used first out (Doris's BE keeps decompressed pages in its StoragePageCache the same way).

Key: (owner, column, page number), where `owner` is a token unique to one open segment reader
for the life of the process (segment files are immutable, and a token is never reused, so an
entry can never describe other bytes); page number -1 holds all of a column's rows as one array
(column_reader.WHOLE_COLUMN, for scans that read every row); column "\\x00short_key" holds the
encoded sort keys of a window of rows the short key index search loaded (segment/reader.py).
Value: the page decoded to an Arrow array (a numpy array for key windows). Size: the
array's buffer bytes; `capacity` (BE config `storage_page_cache_limit`, bytes) bounds their sum,
0 disables the cache. A hit counts as a cached page (CachedPagesNum) and reads no bytes.
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict

import pyarrow as pa

_tokens = itertools.count(1)


def new_owner() -> int:
    """A token for one segment reader's pages."""
    return next(_tokens)


class PageCache:
    def __init__(self, capacity: int):
        self.capacity = max(0, int(capacity))
        self._entries: OrderedDict[tuple, tuple[pa.Array, int]] = OrderedDict()
        self._lock = threading.Lock()
        self.size = 0

    @property
    def enabled(self) -> bool:
        return self.capacity > 0

    def get(self, key: tuple) -> pa.Array | None:
        with self._lock:
            hit = self._entries.get(key)
            if hit is None:
                return None
            self._entries.move_to_end(key)
            return hit[0]

    def put(self, key: tuple, array: pa.Array, size: int | None = None) -> None:
        """Keep `array` (or any immutable value whose bytes `size` gives, e.g. a numpy array
        of a short key index's encoded keys)."""
        size = array.get_total_buffer_size() if size is None else size
        if size > self.capacity:
            return
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self.size -= old[1]
            self._entries[key] = (array, size)
            self.size += size
            while self.size > self.capacity:
                _, (_, evicted) = self._entries.popitem(last=False)
                self.size -= evicted

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.size = 0


DISABLED = PageCache(0)
