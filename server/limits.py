"""Per-connection limits: statement timeouts and the MySQL packet reader's bounds.

- `StatementTimer`: `query_timeout` (queries and everything else) and `insert_timeout`
  (INSERT, DELETE) in seconds, enforced cooperatively: when the time is up the timer sets the
  session's cancel event (the one KILL QUERY sets), the executor stops at its next checkpoint,
  and the session reports `query timeout` instead of "interrupted". The timer lives until the
  next statement starts, so a result still streaming to the client is covered too. All
  sessions' timeouts share one watchdog thread (`_Watchdog`): a thread started per statement
  cost a point query a tenth of its time.
- `BoundedStream`: mysql-mimic's packet reader made strict: a packet (or a multi-packet
  message) larger than `max_allowed_packet` is answered with 1153 and the connection closed
  (nothing larger is buffered); a header cut short or a body shorter than its length closes the
  connection; a wrong sequence id is answered with 1156 and closes it. The server never reads an
  unbounded amount of memory for one client and never crashes on what a client sends.
"""

from __future__ import annotations

import heapq
import itertools
import struct
import threading
import time
from typing import Callable

from mysql_mimic.stream import ConnectionClosed, MysqlStream
from sqlglot import exp

from catalog.errors import DorisError
from catalog.storage_statements import DeleteStmt
from server.parser.fast_values import FastInsert

PACKET_TOO_LARGE = 1153
PACKETS_OUT_OF_ORDER = 1156
_INSERTS = (exp.Insert, FastInsert, DeleteStmt)


class QueryTimeout(DorisError):
    """query_timeout / insert_timeout elapsed: Doris's `query timeout`."""

    def __init__(self) -> None:
        super().__init__("query timeout")


class _Watchdog:
    """Deadlines fired by one daemon thread (started on first use). `schedule` returns a handle
    whose `cancel` stops the call unless it already ran; cancelled entries are dropped when they
    come first, or all at once when they are most of the queue."""

    class Handle:
        __slots__ = ("alive", "owner")

        def __init__(self, owner: "_Watchdog"):
            self.alive, self.owner = True, owner

        def cancel(self) -> None:
            if self.alive:
                self.alive = False
                self.owner._cancelled()

    def __init__(self):
        self._heap: list = []
        self._cond = threading.Condition()
        self._seq = itertools.count()
        self._dead = 0
        self._thread: threading.Thread | None = None

    def schedule(self, seconds: float, fn: Callable[[], None]) -> "_Watchdog.Handle":
        handle = self.Handle(self)
        with self._cond:
            heapq.heappush(self._heap, (time.monotonic() + seconds, next(self._seq), handle, fn))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="statement-timeouts",
                                                 daemon=True)
                self._thread.start()
            if self._heap[0][2] is handle:  # the thread sleeps until the earliest deadline:
                self._cond.notify()  # only a new earliest one wakes it (not every statement)
        return handle

    def _cancelled(self) -> None:
        with self._cond:
            self._dead += 1
            if self._dead > 1024 and self._dead * 2 > len(self._heap):
                self._heap = [e for e in self._heap if e[2].alive]
                heapq.heapify(self._heap)
                self._dead = 0

    def _run(self) -> None:
        while True:
            with self._cond:
                while True:
                    while self._heap and not self._heap[0][2].alive:
                        heapq.heappop(self._heap)
                        self._dead = max(0, self._dead - 1)
                    if not self._heap:
                        self._cond.wait()
                        continue
                    wait = self._heap[0][0] - time.monotonic()
                    if wait <= 0:
                        _, _, handle, fn = heapq.heappop(self._heap)
                        break
                    self._cond.wait(wait)
            if handle.alive:
                handle.alive = False
                fn()


_WATCHDOG = _Watchdog()


class StatementTimer:
    """One armed timeout per session (see the module docstring)."""

    def __init__(self, cancel: threading.Event):
        self.cancel = cancel
        self.expired = False
        self._timer: _Watchdog.Handle | None = None

    def arm(self, stmt: object, variables) -> None:
        self.disarm()
        name = "insert_timeout" if isinstance(stmt, _INSERTS) else "query_timeout"
        try:
            seconds = float(variables.get(name) or 0)
        except (TypeError, ValueError):
            seconds = 0
        if seconds > 0:
            self._timer = _WATCHDOG.schedule(seconds, self._expire)

    def disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self.expired:  # the cancel event was set by the timer, not by KILL
            self.cancel.clear()
        self.expired = False

    def _expire(self) -> None:
        self.expired = True
        self.cancel.set()

    def translate(self, error: Exception) -> Exception:
        """An interruption caused by the timer becomes `query timeout`."""
        if self.expired and getattr(error, "code", None) == 1317:
            return QueryTimeout()
        return error


_WORD = struct.Struct("<I")


class BoundedStream:
    """A MysqlStream whose `read` enforces max_allowed_packet and well-formed framing.

    mysql-mimic's MysqlStream is compiled (mypyc) and cannot be subclassed, so this wraps one
    and hands every other attribute to it (reads and writes alike)."""

    _OWN = ("inner", "max_packet", "reads")

    def __init__(self, reader, writer, max_packet: Callable[[], int]):
        object.__setattr__(self, "inner", MysqlStream(reader, writer))
        object.__setattr__(self, "max_packet", max_packet)
        object.__setattr__(self, "reads", 0)

    def __getattr__(self, name: str):
        return getattr(self.inner, name)

    def __setattr__(self, name: str, value) -> None:
        if name in self._OWN:
            object.__setattr__(self, name, value)
        else:
            setattr(self.inner, name, value)

    async def read(self) -> bytes:
        data = bytearray()
        limit = self.max_packet()
        inner = self.inner  # the wrapped stream's attributes, read once (not via __getattr__)
        reader = inner.reader
        while True:
            if not data:  # a command's first bytes: fast_commands may answer it meanwhile
                reader.idle = True
                try:
                    header = await self._exactly(4)
                finally:
                    reader.idle = False
            else:
                header = await self._exactly(4)
            word = _WORD.unpack(header)[0]
            length, sequence_id = word & 0xFFFFFF, word >> 24
            expected = next(inner.seq)
            if sequence_id != expected:
                await self._refuse(PACKETS_OUT_OF_ORDER, "Got packets out of order")
            if len(data) + length > limit:
                await self._refuse(PACKET_TOO_LARGE,
                                   "Got a packet bigger than 'max_allowed_packet' bytes")
            if length:
                data += await self._exactly(length)
            if length < 0xFFFFFF:
                self.reads += 1
                if self.reads == 1 or data[:1] in (b"\x04", b"\x11"):
                    # The handshake response, COM_FIELD_LIST and COM_CHANGE_USER are parsed
                    # with mysql-mimic's read_str_null, which loops forever (on the event loop)
                    # when a string has no terminator: NULs at the end bound it.
                    data += b"\x00" * 4
                # An empty packet is COM_SLEEP, as MySQL reads it (1047, Unknown command).
                return bytes(data) or b"\x00"

    async def _exactly(self, n: int) -> bytes:
        try:
            return await self.inner.reader.readexactly(n)
        except Exception:  # noqa: BLE001 - EOF, reset, truncated packet: the client is gone
            raise ConnectionClosed() from None

    async def _refuse(self, code: int, message: str) -> None:
        """Send the error (08S01), then close: the rest of the stream cannot be trusted."""
        payload = b"\xff" + struct.pack("<H", code) + b"#08S01" + message.encode()
        try:
            await self.write(payload)
        except Exception:  # noqa: BLE001 - the client may already be gone
            pass
        self.writer.close()
        raise ConnectionClosed()


def max_packet_of(session) -> Callable[[], int]:
    def limit() -> int:
        try:
            return int(session.variables.get("max_allowed_packet"))
        except (TypeError, ValueError, KeyError):
            return 16 << 20
    return limit
