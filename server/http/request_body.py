"""An HTTP request body read as it arrives: a file-like stream, never one bytes object.

The HTTP server (uvicorn, server/http/service.py) parses the framing (Content-Length or
chunked) and hands the body over in pieces through the ASGI `receive` callable, which lives on
the event loop. A Stream Load reads its body from a worker thread (pyarrow's CSV reader wants a
blocking file), so `RequestBody.readinto` asks the loop for the next piece and waits for it:
one hop per read, at most `_MAX_READ` bytes, so a load of any size holds only the blocks its
reader works on (uvicorn stops reading the socket while 64 KB wait unread: flow control).
Nothing is received before the first read: uvicorn sends `100 Continue` then, so a body refused
before it is read (stream_load.check of `streaming_load_max_mb`) is never sent by curl.

`received` counts the body's bytes (LoadBytes, the progress page). A chunked body that grows
past `limit` bytes raises `too_large(size)`. A body cut short (the client went away) raises
`MalformedBody`. `stop()` ends every wait (the server is shutting down).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import io
import threading

from catalog.errors import DorisError

_MAX_READ = 1 << 20  # bytes per read: `received` (load progress) moves as the body arrives,
# not once per 16 MB CSV block
_WAIT_SLICE = 1.0  # seconds between checks of `stopped` while a read waits for the client


class MalformedBody(DorisError):
    """The request body ended before its declared length (or its framing broke)."""


class BodyTooLarge(DorisError):
    """A chunked body grew past the limit (its size is known only as it arrives)."""

    doris_prefix = False


class RequestBody(io.RawIOBase):
    def __init__(self, receive, loop: asyncio.AbstractEventLoop, length: int | None,
                 limit: int = 0,
                 too_large=lambda size: BodyTooLarge(f"body size {size} exceeds the limit"),
                 stopped: threading.Event | None = None):
        """`receive`: the request's ASGI receive callable, run on `loop`. `length` None:
        chunked transfer encoding. `limit` 0: no limit on a chunked body."""
        self._receive, self._loop = receive, loop
        self.length = length
        self.limit, self.too_large = limit, too_large
        self.received = 0
        self.started = False      # whether anything was asked of the client (100 Continue)
        self._done = length == 0
        self._pending = b""       # the last piece received, read up to `_offset`
        self._offset = 0
        self._stopped = stopped or threading.Event()
        self._lock = threading.RLock()

    @property
    def done(self) -> bool:
        return self._done and self._offset == len(self._pending)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        # pyarrow's CSV reader may read ahead on a thread of its own: one reader at a time.
        with self._lock:
            view = memoryview(buffer).cast("B")
            if self._offset == len(self._pending) and not self._done:
                self._pending, self._offset = self._fetch(min(len(view), _MAX_READ)), 0
            n = min(len(view), len(self._pending) - self._offset)
            view[:n] = memoryview(self._pending)[self._offset:self._offset + n]
            self._offset += n
            return n

    def _fetch(self, want: int) -> bytes:
        """At least `want` bytes (fewer at the end of the body), from the loop."""
        self.started = True
        future = asyncio.run_coroutine_threadsafe(self._collect(want), self._loop)
        while True:
            try:
                data, more = future.result(_WAIT_SLICE)
                break
            except concurrent.futures.TimeoutError:
                if self._stopped.is_set():
                    future.cancel()
                    raise MalformedBody("the server is shutting down") from None
        self.received += len(data)
        self._done = not more
        if self.length is not None and self._done and self.received < self.length:
            raise MalformedBody("the request body ended before its declared length")
        if self.length is None and self.limit and self.received > self.limit:
            raise self.too_large(self.received)
        return data

    async def _collect(self, want: int) -> tuple[bytes, bool]:
        parts, size = [], 0
        while size < want:
            message = await self._receive()
            if message["type"] == "http.disconnect":
                return b"".join(parts), False
            chunk = message.get("body", b"")
            parts.append(chunk)
            size += len(chunk)
            if not message.get("more_body", False):
                return b"".join(parts), False
        return b"".join(parts), True

    async def read_all(self, max_bytes: int) -> bytes | None:
        """The whole body, on the loop (small bodies: JSON requests, forms), or None if it is
        longer than `max_bytes`."""
        self.started = True
        parts, size, more = [], 0, not self._done
        while more:
            message = await self._receive()
            if message["type"] == "http.disconnect":
                raise MalformedBody("the request body ended before its declared length")
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > max_bytes:
                return None
            parts.append(chunk)
            more = message.get("more_body", False)
        self.received += size
        self._done = True
        return b"".join(parts)

    def unread_beyond(self, max_bytes: int) -> bool:
        """Whether more than `max_bytes` of the body may be left unread (a chunked body's rest
        is unknown): then the reply closes the connection instead of letting the server drop
        the rest as it arrives."""
        if self._done:
            return False
        if self.length is None:
            return True
        return self.length - self.received > max_bytes
