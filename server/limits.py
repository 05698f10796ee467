"""Per-connection limits: statement timeouts and the MySQL packet reader's bounds.

- `StatementTimer`: `query_timeout` (queries and everything else) and `insert_timeout`
  (INSERT, DELETE) in seconds, enforced cooperatively: when the time is up the timer sets the
  session's cancel event (the one KILL QUERY sets), the executor stops at its next checkpoint,
  and the session reports `query timeout` instead of "interrupted". The timer lives until the
  next statement starts, so a result still streaming to the client is covered too.
- `BoundedStream`: mysql-mimic's packet reader made strict: a packet (or a multi-packet
  message) larger than `max_allowed_packet` is answered with 1153 and the connection closed
  (nothing larger is buffered); a header cut short or a body shorter than its length closes the
  connection; a wrong sequence id is answered with 1156 and closes it. The server never reads an
  unbounded amount of memory for one client and never crashes on what a client sends.
"""

from __future__ import annotations

import struct
import threading
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


class StatementTimer:
    """One armed timeout per session (see the module docstring)."""

    def __init__(self, cancel: threading.Event):
        self.cancel = cancel
        self.expired = False
        self._timer: threading.Timer | None = None

    def arm(self, stmt: object, variables) -> None:
        self.disarm()
        name = "insert_timeout" if isinstance(stmt, _INSERTS) else "query_timeout"
        try:
            seconds = float(variables.get(name) or 0)
        except (TypeError, ValueError):
            seconds = 0
        if seconds > 0:
            self._timer = threading.Timer(seconds, self._expire)
            self._timer.daemon = True
            self._timer.start()

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
        while True:
            header = await self._exactly(4)
            word = struct.unpack("<I", header)[0]
            length, sequence_id = word & 0xFFFFFF, word >> 24
            expected = next(self.seq)
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
            return await self.reader.readexactly(n)
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
