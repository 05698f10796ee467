"""An HTTP request body read as it arrives: a file-like stream, never one bytes object.

`RequestBody` reads a body of known `Content-Length`, or a chunked one (`curl -T -`), from the
connection, at most what its reader asks for at a time, so a Stream Load of any size holds only
the blocks its CSV reader works on. `received` counts the body's bytes (LoadBytes). A chunked
body that grows past `limit` bytes raises `BodyTooLarge` (a known length is checked before
reading: `stream_load.check_body_size`). After the request, `drain` reads what the handler
left unread so the connection can serve its next request, or says to close it when too much
is left.
"""

from __future__ import annotations

import io
import threading

from catalog.errors import DorisError


_MAX_READ = 1 << 20  # bytes per read from the socket: `received` (load progress) moves as
# the body arrives, not once per 16 MB CSV block


class MalformedBody(DorisError):
    """The chunked framing of a request body is broken."""


class BodyTooLarge(DorisError):
    """A chunked body grew past the limit (its size is known only as it arrives)."""

    doris_prefix = False


class RequestBody(io.RawIOBase):
    def __init__(self, rfile, length: int | None, limit: int = 0,
                 too_large=lambda size: BodyTooLarge(f"body size {size} exceeds the limit")):
        """`length` None: chunked transfer encoding. `limit` 0: no limit on a chunked body;
        `too_large(size)` makes the error raised past it."""
        self._rfile = rfile
        self.length = length
        self._left = length if length is not None else 0  # of the body, or of the chunk
        self._chunked = length is None
        self._done = length == 0
        self.limit, self.too_large = limit, too_large
        self.received = 0
        self._lock = threading.RLock()

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        # pyarrow's CSV reader may read ahead on a thread of its own while the handler, its
        # load failed, drains the body: one reader of the connection at a time keeps the
        # framing whole (else the connection closes under a client still sending).
        with self._lock:
            return self._readinto(buffer)

    def _readinto(self, buffer) -> int:
        if self._done:
            return 0
        if self._chunked and self._left == 0:
            self._next_chunk()
            if self._done:
                return 0
        view = memoryview(buffer).cast("B")
        data = self._rfile.read(min(len(view), self._left, _MAX_READ))
        if not data:
            raise MalformedBody("the request body ended before its declared length")
        n = len(data)
        view[:n] = data
        self._left -= n
        self.received += n
        if not self._chunked and self._left == 0:
            self._done = True
        elif self._chunked and self._left == 0:
            self._rfile.readline(8)  # the CRLF after a chunk's data
        return n

    def _next_chunk(self) -> None:
        line = self._rfile.readline(1024)
        try:
            size = int(line.split(b";")[0].strip() or b"0", 16)
        except ValueError:
            raise MalformedBody("malformed chunked body") from None
        if size == 0:
            while self._rfile.readline(1024).strip():
                pass  # trailers
            self._done = True
            return
        self._left = size
        if self.limit and self.received + size > self.limit:
            raise self.too_large(self.received + size)

    def drain(self, max_bytes: int) -> bool:
        """Read and drop the rest of the body, unless more than `max_bytes` of it are left
        (False: the caller closes the connection instead). A broken body also gives False."""
        with self._lock:
            return self._drain(max_bytes)

    def _drain(self, max_bytes: int) -> bool:
        if self._done:
            return True
        self.limit = 0
        if not self._chunked and self._left > max_bytes:
            return False
        start = self.received
        try:
            while self.read(1 << 20):
                if self.received - start > max_bytes:
                    return False
        except (DorisError, OSError):
            return False
        return True
