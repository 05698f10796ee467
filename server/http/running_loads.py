"""The Stream Loads running now, for the web UI's progress page (server/webui/progress.py).

Each entry is the load's reply being filled in (`NumberTotalRows` grows batch by batch: see
stream_load._load) and its request body (`received` bytes of `length`, None when chunked), so
a poll sees rows and bytes so far and a percent when the body's length is known.
"""

from __future__ import annotations

import itertools
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class RunningLoad:
    db: str
    table: str
    user: str
    body: object                      # server/http/request_body.RequestBody
    started: float = field(default_factory=time.time)
    reply: dict = field(default_factory=dict)  # the load's reply as it is being filled

    def row(self) -> dict:
        length = getattr(self.body, "length", None)
        received = getattr(self.body, "received", 0)
        return {"Label": self.reply.get("Label", ""), "Db": self.db, "Table": self.table,
                "User": self.user, "ElapsedMs": int((time.time() - self.started) * 1000),
                "RowsRead": self.reply.get("NumberTotalRows", 0), "BytesReceived": received,
                "BytesTotal": length,
                "Percent": round(100.0 * received / length, 1) if length else None}


class RunningLoads:
    def __init__(self) -> None:
        self._loads: dict[int, RunningLoad] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    @contextmanager
    def running(self, load: RunningLoad):
        key = next(self._ids)
        with self._lock:
            self._loads[key] = load
        try:
            yield load
        finally:
            with self._lock:
                del self._loads[key]

    def snapshot(self) -> list[RunningLoad]:
        with self._lock:
            return list(self._loads.values())
