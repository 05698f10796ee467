"""The rejected rows of recent stream loads, kept in memory and served at their ErrorURL."""

from __future__ import annotations

import threading
import uuid
from collections import OrderedDict

_KEEP = 64  # loads whose error logs are kept


class ErrorLogStore:
    def __init__(self, base_url: str = ""):
        self.base_url = base_url
        self._logs: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, lines: list[str]) -> str:
        """Keep one load's error lines; returns the URL that shows them."""
        name = f"__shard_0/error_log_insert_stmt_{uuid.uuid4().hex}"
        with self._lock:
            self._logs[name] = "\n".join(lines) + "\n"
            while len(self._logs) > _KEEP:
                self._logs.popitem(last=False)
        return f"{self.base_url}/api/_load_error_log?file={name}"

    def get(self, name: str) -> str | None:
        with self._lock:
            return self._logs.get(name)
