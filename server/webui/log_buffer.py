"""The tail of the server log, kept in memory for the web UI's Logs page.

The server logs to stderr (server/main.py); `install` adds a handler to the root logger that
keeps the last `CAPACITY` formatted lines in a ring. The Logs page reads only this ring: there is
no file name or path parameter, so it cannot be made to read any other file.
"""

from __future__ import annotations

import logging
import threading
from collections import deque

CAPACITY = 5000
_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class LogBuffer(logging.Handler):
    def __init__(self, capacity: int = CAPACITY) -> None:
        super().__init__()
        self._lines: deque[str] = deque(maxlen=capacity)
        self._ring_lock = threading.Lock()
        self.setFormatter(logging.Formatter(_FORMAT))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = self.format(record)
        except Exception:  # noqa: BLE001 - logging must never fail the caller
            self.handleError(record)
            return
        with self._ring_lock:
            self._lines.extend(text.splitlines() or [""])

    def tail(self, lines: int) -> list[str]:
        with self._ring_lock:
            return list(self._lines)[-lines:] if lines > 0 else []


_BUFFER: LogBuffer | None = None
_INSTALL_LOCK = threading.Lock()


def install() -> LogBuffer:
    """The process's buffer, added to the root logger once (at INFO, whatever the level)."""
    global _BUFFER
    with _INSTALL_LOCK:
        if _BUFFER is None:
            _BUFFER = LogBuffer()
            _BUFFER.setLevel(logging.INFO)
            logging.getLogger().addHandler(_BUFFER)
        return _BUFFER
