"""minidoris's MySQL connection: mysql-mimic's Connection with the project's fixes.

- COM_QUERY runs the session's statements in a worker thread (`asyncio.to_thread`), so a long
  query never stalls other connections;
- results are written by `write_rows`: Doris-accurate column metadata and vectorised row
  encoding (`text_rows.encode_rows`), in batches, with the end-of-result packet carrying 0
  affected rows (mysql-mimic's row count there breaks MariaDB Connector/J);
- OK packets carry the real affected-row count; several statements in one COM_QUERY return
  several results with SERVER_MORE_RESULTS_EXISTS;
- errors carry their MySQL number, SQLSTATE and Doris's message text;
- OK, EOF and column-count packets are built once per (capabilities, status, fields), and a
  cached light plan's column packets once per connection (a key lookup's fixed cost).
"""

from __future__ import annotations

import asyncio
import contextlib
from functools import lru_cache
import logging
import struct
import time

from mysql_mimic import context, packets
from mysql_mimic.constants import KillKind
from mysql_mimic.errors import ErrorCode, MysqlError
from mysql_mimic.connection import Connection
from mysql_mimic.types import Capabilities, ServerStatus, str_len

from catalog.errors import DorisError, InternalError
from executor.errors import QueryInterrupted
from executor.expressions.errors import ExpressionError
from mysql_mimic.prepared import PreparedStatement
from server.protocol.fast_commands import CommandReader, keep_polling
from server.protocol.field_list import field_list_packets
from server.protocol.format import column_definition, few_texts, mysql_type, to_text
from server.protocol.prepared import (binary_row, bind_sql, placeholders, read_params,
                                      value_encoder)
from storage import cpu_slots
from storage.types import DataType
from server.protocol.text_rows import FEW_ROWS, encode_rows, encode_values
from server.results import OkResult, RowsResult

ROWS_PER_WRITE = 8192
_AT_ONCE_BYTES = 16 << 10  # a command packet answered in the data callback is no larger
_COM_QUERY, _COM_STMT_EXECUTE, _COM_STMT_RESET = 0x03, 0x17, 0x1A
_COM_STATISTICS, _COM_SET_OPTION = 0x09, 0x1B
_STARTED = time.time()
_NOT_SHORT = object()  # stashed: the short circuit declined the command
log = logging.getLogger(__name__)
STMT_HAS_NO_OPEN_CURSOR = 1421
VARCHAR = DataType("VARCHAR", length=65533)


class _LoginStream:
    """The connection's stream while it authenticates: the login's OK packet is written only
    once the session has started, its error in its place otherwise (DorisConnection)."""

    def __init__(self, stream, accepted: bytes, connection: "DorisConnection"):
        self._stream, self._accepted, self._connection = stream, accepted, connection

    def __getattr__(self, name: str):
        return getattr(self._stream, name)

    async def write(self, data: bytes, *args, **kwargs) -> None:
        conn = self._connection
        if data == self._accepted and conn._init_error is None:
            try:
                await conn.session.init(conn)
            except MysqlError as e:
                conn._init_error = e
                data = conn.error_packet(_LoginError(e))
        await self._stream.write(data, *args, **kwargs)


class _LoginError:
    """A login's MysqlError for `error_packet`: 1049 and 1044 with MySQL's SQLSTATE 42000."""

    def __init__(self, e: MysqlError):
        self.code, self.msg = int(e.code), e.msg
        self.sqlstate = "42000" if self.code in (1049, 1044) else "HY000"

    def client_message(self) -> str:
        return self.msg


class DorisConnection(Connection):
    async def _start(self) -> None:
        """As mysql-mimic's, but the session starts before the handshake's OK: a database the
        handshake names that does not exist (or may not be used) is answered with its error
        (1049 "Unknown database", SQLSTATE 42000) in place of the OK, as Doris's
        MysqlProto.negotiate does, and the session is closed (it held a connection slot)."""
        context.connection_id.set(self.connection_id)
        self._init_error: MysqlError | None = None
        try:
            await self.connection_phase()
        except MysqlError as e:
            await self.stream.write(self.error(msg=e.msg, code=e.code))
            await self.session.close()
            return
        if getattr(self.session, "access", None) is None or self._init_error is not None:
            await self.session.close()
            return  # authentication failed (1045 sent, server/auth.py), or the session's error
        if getattr(self.session, "connection", None) is None:  # the OK went out unrecognised
            try:
                await self.session.init(self)
            except MysqlError as e:
                await self.stream.write(self.error(msg=e.msg, code=e.code))
                await self.session.close()
                return
        reader = self.stream.reader
        if isinstance(reader, CommandReader):
            reader.answer = self.answer_at_once
        try:
            await self.command_phase()
        except asyncio.CancelledError:
            if self._kill != KillKind.CONNECTION:
                raise
            await self.stream.write(self.error(msg="Session was killed",
                                               code=ErrorCode.SESSION_WAS_KILLED))
            self._kill = None
        finally:
            if isinstance(reader, CommandReader):
                reader.answer = None
            await self.session.close()

    async def authenticate(self, *args, **kwargs) -> None:
        """mysql-mimic's, with the session started where it writes the login's OK: the OK goes
        out only when the session starts (`_start`)."""
        stream = self.stream
        self.stream = _LoginStream(stream, self.ok(), self)
        try:
            await super().authenticate(*args, **kwargs)
        finally:
            self.stream = stream

    # OK / EOF packets as mysql-mimic builds them, kept per (capabilities, status, fields):
    # its Flag arithmetic (`in`, `|` on enum.Flag) cost more than a key lookup's storage read
    def ok(self, eof: bool = False, affected_rows: int = 0, last_insert_id: int = 0,
           warnings: int = 0, flags: int = 0) -> bytes:
        return _ok_packet(self.capabilities._value_, self.status_flags._value_, eof,
                          affected_rows, last_insert_id, warnings, int(flags))

    def eof(self, warnings: int = 0, flags: int = 0) -> bytes:
        return _eof_packet(self.capabilities._value_, self.status_flags._value_, warnings,
                           int(flags))

    def deprecate_eof(self) -> bool:
        return bool(self.capabilities._value_ & _DEPRECATE_EOF)

    def error(self, **kwargs) -> bytes:
        """As mysql-mimic's; a login refused for a connection limit reports 1203, not 1045."""
        code = getattr(self.identity_provider, "refusal_code", None)
        if code is not None and kwargs.get("code") == ErrorCode.ACCESS_DENIED_ERROR:
            kwargs["code"] = code
        return super().error(**kwargs)

    async def handle_change_user(self, data: bytes) -> None:
        """COM_CHANGE_USER: a failed re-authentication closes the connection."""
        with malformed_packet():
            await super().handle_change_user(data)
        if getattr(self.session, "access", None) is None:
            self.stream.writer.close()

    async def handle_query(self, data: bytes) -> None:
        with malformed_packet():
            com_query = packets.parse_com_query(
                capabilities=self.capabilities, client_charset=self.client_charset, data=data)
        results = self._stashed(data)
        if results is None:
            results = self.session.short_circuit(com_query.sql)  # a key lookup: at once
        if results is None or results is _NOT_SHORT:
            results = await asyncio.to_thread(self.session.execute, com_query.sql)
        for i, result in enumerate(results):
            more = ServerStatus.SERVER_MORE_RESULTS_EXISTS if i < len(results) - 1 else 0
            if isinstance(result, Exception):  # DorisError or ExpressionError: code + message
                await self.stream.write(self.error_packet(result))
                return
            if isinstance(result, OkResult):
                packet = self.ok(affected_rows=result.affected_rows, warnings=result.warnings,
                                 flags=more)
                if result.info and Capabilities.CLIENT_SESSION_TRACK not in self.capabilities:
                    # Length-encoded, as Doris sends it and as MariaDB's client reads it.
                    packet += str_len(result.info.encode())
                await self.stream.write(packet)
            else:
                try:
                    await self.write_rows(result, more)
                except (ConnectionResetError, BrokenPipeError):
                    # The client went away mid-result: no internal error. The next read ends
                    # the connection (mysql-mimic's "Connection closed").
                    self.stream.writer.close()
                    return

    async def handle_field_list(self, data: bytes) -> None:
        """COM_FIELD_LIST (the mysql CLI's auto-rehash): see field_list.py. In a worker thread:
        the catalog lock is never taken on the event loop."""
        with malformed_packet():
            table = self.client_charset.decode(data.split(b"\x00", 1)[0])
        try:
            columns = await asyncio.to_thread(
                field_list_packets, self.session.services.catalog, self.session.database,
                table, getattr(self.session, "access", None))
        except DorisError as e:
            await self.stream.write(self.error_packet(e))
            return
        self.stream.write_many(columns)
        await self.stream.write(self.ok_or_eof())

    async def handle_stmt_prepare(self, data: bytes) -> None:
        with malformed_packet():
            sql = self.client_charset.decode(data)
        try:
            spots = placeholders(sql)
        except Exception as e:  # noqa: BLE001 - a tokenizer error is the client's syntax error
            await self.stream.write(self.error_packet(e if hasattr(e, "code") else
                                                      InternalError(str(e))))
            return
        try:
            columns = await asyncio.to_thread(self.session.describe,
                                              bind_sql(sql, spots, [None] * len(spots)))
        except (DorisError, ExpressionError) as e:  # as Doris: a bad query fails at prepare
            await self.stream.write(self.error_packet(e))
            return
        except Exception:  # noqa: BLE001 - not describable (e.g. `LIMIT ?`): described at execute
            logging.getLogger(__name__).debug("cannot describe %r", sql, exc_info=True)
            columns = []
        stmt = PreparedStatement(stmt_id=next(self.prepared_stmt_seq), sql=sql,
                                 num_params=len(spots))
        stmt.spots, stmt.types = spots, None
        self.prepared_stmts[stmt.stmt_id] = stmt
        packets_out = [_prepare_ok(stmt.stmt_id, len(columns), stmt.num_params)]
        if stmt.num_params:
            packets_out += [column_definition("?", VARCHAR)] * stmt.num_params
            if not self.deprecate_eof():  # an EOF here breaks MariaDB Connector/J otherwise
                packets_out.append(self.eof())
        if columns:  # the result's columns, so drivers can describe it before executing
            packets_out += [column_definition(c.name, c.type, c.nullable) for c in columns]
            if not self.deprecate_eof():
                packets_out.append(self.eof())
        self.stream.write_many(packets_out)
        await self.stream.drain()

    async def handle_stmt_execute(self, data: bytes) -> None:
        with malformed_packet():
            stmt = self.get_stmt(struct.unpack_from("<I", data)[0])
            _, use_cursor, values, stmt.types = read_params(
                data, stmt.num_params, stmt.types, self.capabilities, "utf-8")
        results = self._stashed(data)
        if results is None:
            results = self.session.short_circuit_prepared(stmt, values)  # a key lookup: at once
        if results is None or results is _NOT_SHORT:
            sql = bind_sql(stmt.sql, stmt.spots, values)
            results = await asyncio.to_thread(self.session.execute, sql)
        result = results[-1]
        if isinstance(result, Exception):
            await self.stream.write(self.error_packet(result))
            return
        if isinstance(result, OkResult):
            await self.stream.write(self.ok(affected_rows=result.affected_rows))
            return
        if use_cursor:  # COM_STMT_FETCH pulls the rows; they are computed as it asks
            stmt.cursor = _lazy_cursor(_binary_rows(result))
            self.stream.write_many(self.column_packets(result.columns))  # one terminator
            await self.stream.write(self.ok_or_eof(flags=ServerStatus.SERVER_STATUS_CURSOR_EXISTS))
            return
        try:
            if self.frame_small_binary(result):  # a key lookup: encoded here, one write
                await self.stream.drain()
                return
        except Exception as e:  # noqa: BLE001 - reported to the client, see _report
            await self.stream.write(self.error_packet(_report(e)))
            return
        rows = _binary_rows(result)
        self.stream.write_many(self.result_header(result))
        while True:
            try:
                chunk = await asyncio.to_thread(next, rows, None)
            except Exception as e:  # noqa: BLE001 - reported to the client, see _report
                await self.stream.write(self.error_packet(_report(e)))
                return
            if chunk is None:
                break
            self.stream.write_many(chunk)
            await self.stream.drain()
        await self.stream.write(self.ok_or_eof(affected_rows=0))

    # mysql-mimic's own handlers, which parse the packet: a malformed one is error 1835
    async def handle_stmt_send_long_data(self, data: bytes) -> None:
        with malformed_packet():
            await super().handle_stmt_send_long_data(data)

    async def handle_stmt_fetch(self, data: bytes) -> None:
        with malformed_packet():
            stmt = self.get_stmt(packets.parse_handle_stmt_fetch(data).stmt_id)
        if stmt.cursor is None:
            raise MysqlError(f"The statement ({stmt.stmt_id}) has no open cursor.",
                             STMT_HAS_NO_OPEN_CURSOR)
        await super().handle_stmt_fetch(data)

    async def handle_stmt_reset(self, data: bytes) -> None:
        """mysql-mimic's, reading the statement id with struct (mysql-connector sends one
        before every COM_STMT_EXECUTE of a prepared cursor; usually answered at once)."""
        with malformed_packet():
            stmt = self.get_stmt(struct.unpack_from("<I", data)[0])
        stmt.param_buffers = None
        stmt.cursor = None  # the statement's state; the session's is not reset (COM_RESET_CONNECTION)
        await self.stream.write(self.ok())

    async def handle_stmt_close(self, data: bytes) -> None:
        with malformed_packet():
            await super().handle_stmt_close(data)

    async def handle_init_db(self, data: bytes) -> None:
        with malformed_packet():
            database = packets.parse_com_init_db(self.client_charset, data)
        await self.session.use(database)
        await self.stream.write(self.ok())

    def frame_small_rows(self, result: RowsResult, more: int = 0) -> bool:
        """Frame a small text result whole (columns, rows, OK/EOF) into the stream's buffer;
        False, framing nothing, for a result too large for one write. An encoding error is
        raised with nothing framed."""
        if not _small(result):
            return False
        with self._framing() as buf:
            self.stream.write_many(self.result_header(result, more))
            seq = self.stream.seq
            for payload, seq.value in _row_packets(result, seq.value,
                                                   getattr(self.session, "cancel", None)):
                buf += payload
            self.stream.write_many([self.ok_or_eof(affected_rows=0, flags=more)])
        return True

    def frame_small_binary(self, result: RowsResult) -> bool:
        """`frame_small_rows` in the binary protocol (a COM_STMT_EXECUTE's result)."""
        if not _small(result):
            return False
        with self._framing():
            packets_out = self.result_header(result)
            for chunk in _binary_rows(result):
                packets_out += chunk
            packets_out.append(self.ok_or_eof(affected_rows=0))
            self.stream.write_many(packets_out)
        return True

    @contextlib.contextmanager
    def _framing(self):
        """The stream's buffer to frame packets into; an error takes back what was framed."""
        stream = self.stream
        buf, seq = stream._buffer, stream.seq.value  # noqa: SLF001 - mysql-mimic's buffer
        mark = len(buf)
        try:
            yield buf
        except BaseException:
            del buf[mark:]
            stream.seq.value = seq
            raise

    # -- commands answered in the data callback (server/protocol/fast_commands.py) --

    def answer_at_once(self, data: bytes) -> bool:
        """Answer `data`, one whole command packet that arrived while the connection's task
        waited for a command, right here if it is a COM_STMT_RESET or a key lookup the short
        circuit takes (COM_QUERY, COM_STMT_EXECUTE) and its reply fits one write: True, the
        reply written. False leaves the packet to the task (a computed answer it could not
        write is stashed for it, so nothing runs twice)."""
        if len(data) < 5 or data[3] != 0 or len(data) > _AT_ONCE_BYTES:
            return False
        if data[0] | data[1] << 8 | data[2] << 16 != len(data) - 4 or \
                len(data) - 4 > self.stream.max_packet():  # the task refuses it (1153)
            return False
        stream = self.stream
        transport = stream.writer.transport
        if transport.is_closing() or transport.get_write_buffer_size() or stream._buffer:  # noqa: SLF001
            return False
        command, body = data[4], data[5:]
        stream.seq.value = 1  # the request was packet 0
        try:
            if command == _COM_STMT_RESET:
                done = self._reset_at_once(body)
            elif command == _COM_STMT_EXECUTE:
                done = self._execute_at_once(body)
            elif command == _COM_QUERY:
                done = self._query_at_once(body)
            elif command == _COM_SET_OPTION:  # multi-statements on/off (JDBC's batches):
                # statements may always be several here; MySQL answers EOF
                self.stream.write_many([self.ok(eof=True) if self.deprecate_eof()
                                        else self.eof()])
                done = True
            elif command == _COM_STATISTICS:  # `mysqladmin status`, the client's \s
                self.stream.write_many([self._statistics()])
                done = True
            else:
                done = False
        except Exception:  # noqa: BLE001 - the task handles the packet and reports the error
            log.debug("answering at once failed", exc_info=True)
            done = False
        if done:
            transport.write(stream._buffer)  # noqa: SLF001 - as MysqlStream.drain sends it
            stream._buffer = bytearray()  # noqa: SLF001 - the transport may keep a view of it
            keep_polling()  # the client's next command is likely a moment away
        stream.reset_seq()
        return done

    def _statistics(self) -> bytes:
        sessions = getattr(self.session.services, "sessions", None) or {}
        uptime = int(time.time() - _STARTED)
        return (f"Uptime: {uptime}  Threads: {len(sessions)}  Questions: 0  Slow queries: 0  "
                f"Opens: 0  Flush tables: 0  Open tables: 0  Queries per second avg: 0.000"
                ).encode()

    def _reset_at_once(self, body: bytes) -> bool:
        stmt = self.prepared_stmts.get(struct.unpack_from("<I", body)[0])
        if stmt is None:
            return False  # the task reports the unknown statement
        stmt.param_buffers = None
        stmt.cursor = None
        self.stream.write_many([self.ok()])
        return True

    def _execute_at_once(self, body: bytes) -> bool:
        stmt = self.prepared_stmts.get(struct.unpack_from("<I", body)[0])
        if stmt is None or not hasattr(stmt, "spots"):
            return False
        _, use_cursor, values, types = read_params(
            body, stmt.num_params, stmt.types, self.capabilities, "utf-8")
        if use_cursor:
            return False
        stmt.types = types
        results = self.session.short_circuit_prepared(stmt, values)
        return self._frame_at_once(body, results, self.frame_small_binary)

    def _query_at_once(self, body: bytes) -> bool:
        sql = packets.parse_com_query(capabilities=self.capabilities,
                                      client_charset=self.client_charset, data=body).sql
        return self._frame_at_once(body, self.session.short_circuit(sql), self.frame_small_rows)

    def _frame_at_once(self, body: bytes, results: list | None, frame) -> bool:
        """Frame the one result of a short-circuited command; else stash what was found."""
        if results is not None and len(results) == 1 and isinstance(results[0], RowsResult):
            try:
                if frame(results[0]):
                    return True
            except Exception:  # noqa: BLE001 - the task encodes it again and reports the error
                pass
        self._stash = (body, _NOT_SHORT if results is None else results)
        return False

    def _stashed(self, body: bytes):
        """What `answer_at_once` found for this command packet (`body` after the command
        byte): its results, _NOT_SHORT (the short circuit declined it), or None."""
        stash = self.__dict__.pop("_stash", None)
        if stash is not None and stash[0] == body:
            return stash[1]
        return None

    def error_packet(self, err) -> bytes:
        msg = err.client_message().encode("utf-8", errors="replace")
        if Capabilities.CLIENT_PROTOCOL_41 in self.capabilities:
            return b"\xff" + struct.pack("<H", err.code) + b"#" + err.sqlstate.encode()[:5] + msg
        return b"\xff" + struct.pack("<H", err.code) + msg

    def result_header(self, result: RowsResult, more: int = 0) -> list[bytes]:
        """A result's column count and definitions, then the EOF that ends them unless the
        client deprecated it (a new list)."""
        header = self.column_packets(result.columns)
        if not self.deprecate_eof():
            header.append(self.eof(flags=more))
        return header

    def column_packets(self, columns) -> list[bytes]:
        """The column count and definition packets of a result (a new list). A tuple of
        columns (a cached light plan's, server/short_circuit.py) is remembered by identity
        for the next result of the same statement on this connection."""
        memo = self.__dict__.get("_column_memo")
        if memo is not None and memo[0] is columns and memo[2] == self.capabilities._value_:
            return list(memo[1])
        header = [_column_count(self.capabilities._value_, len(columns))]
        header += [column_definition(c.name, c.type, c.nullable) for c in columns]
        if isinstance(columns, tuple):
            self._column_memo = (columns, tuple(header), self.capabilities._value_)
        return header

    async def write_rows(self, result: RowsResult, more: int = 0) -> None:
        """Column definitions, then the rows as they are computed, then OK/EOF.

        Batches are pulled and encoded in a worker thread (`_row_packets`), one chunk ahead of
        the socket: the next chunk is computed and encoded while the event loop sends this one,
        and no more than two encoded chunks exist at a time."""
        try:
            if self.frame_small_rows(result, more):  # SHOW output, a key lookup: one write
                await self.stream.drain()
                return
        except Exception as e:  # noqa: BLE001 - reported to the client, see _report
            timer = getattr(self.session, "timer", None)
            await self.stream.write(self.error_packet(
                _report(timer.translate(e) if timer is not None else e)))
            return
        self.stream.write_many(self.result_header(result, more))
        chunks = _row_packets(result, self.stream.seq.value, getattr(self.session, "cancel", None))

        async def next_chunk():
            return await asyncio.to_thread(_next_chunk, chunks)

        await self.stream.drain()  # the client has the columns before the first row
        pending = asyncio.ensure_future(next_chunk())
        try:
            while True:
                try:
                    chunk = await pending
                except Exception as e:  # noqa: BLE001 - reported to the client, see _report
                    timer = getattr(self.session, "timer", None)  # query_timeout while streaming
                    await self.stream.write(self.error_packet(
                        _report(timer.translate(e) if timer is not None else e)))
                    return
                if chunk is None:
                    break
                pending = asyncio.ensure_future(next_chunk())
                payload, self.stream.seq.value = chunk
                self.stream.writer.write(payload)
                await self.stream.writer.drain()
        finally:
            if not pending.done():  # the client went away mid-result: nobody awaits it
                pending.add_done_callback(lambda f: f.cancelled() or f.exception())
        await self.stream.write(self.ok_or_eof(affected_rows=0, flags=more), drain=True)


@contextlib.contextmanager
def malformed_packet():
    """A command packet that does not parse (truncated, not UTF-8) is the client's error:
    1835 "Malformed communication packet." as MySQL sends it, and the connection goes on."""
    try:
        yield
    except (struct.error, IndexError, UnicodeDecodeError) as e:
        raise MysqlError("Malformed communication packet.", ErrorCode.MALFORMED_PACKET) from e


def _small(result: RowsResult) -> bool:
    """Whether the result is materialised and small enough to be sent in one write."""
    return isinstance(result.batches, (list, tuple)) and \
        sum(b.num_rows for b in result.batches) <= ROWS_PER_WRITE


def _prepare_ok(stmt_id: int, num_columns: int, num_params: int) -> bytes:
    """COM_STMT_PREPARE_OK: status 0, statement id, columns, parameters, filler, warnings."""
    return struct.pack("<BIHHBH", 0, stmt_id, num_columns, num_params, 0, 0)


_DEPRECATE_EOF = Capabilities.CLIENT_DEPRECATE_EOF.value


@lru_cache(maxsize=1024)
def _ok_packet(capabilities: int, status: int, eof: bool, affected_rows: int,
               last_insert_id: int, warnings: int, flags: int) -> bytes:
    return packets.make_ok(capabilities=Capabilities(capabilities),
                           status_flags=ServerStatus(status), eof=eof,
                           affected_rows=affected_rows, last_insert_id=last_insert_id,
                           warnings=warnings, flags=flags)


@lru_cache(maxsize=256)
def _eof_packet(capabilities: int, status: int, warnings: int, flags: int) -> bytes:
    return packets.make_eof(capabilities=Capabilities(capabilities),
                            status_flags=ServerStatus(status), warnings=warnings, flags=flags)


@lru_cache(maxsize=256)
def _column_count(capabilities: int, count: int) -> bytes:
    return packets.make_column_count(capabilities=Capabilities(capabilities), column_count=count)


def _next_chunk(chunks):
    """The next chunk of a streamed result, computed holding a statement slot (the query's
    remaining work runs here: storage/cpu_slots.py)."""
    with cpu_slots.slot():
        return next(chunks, None)


def _row_packets(result: RowsResult, seq: int, cancel=None):
    """(packets, next sequence id) for each chunk of at most ROWS_PER_WRITE rows; a KILL QUERY
    (the session's `cancel` event) stops a large materialised result between chunks."""
    for batch in result.batches:
        for start in range(0, batch.num_rows, ROWS_PER_WRITE):
            if cancel is not None and cancel.is_set():
                raise QueryInterrupted()
            chunk = batch if batch.num_rows <= ROWS_PER_WRITE else \
                batch.slice(start, ROWS_PER_WRITE)
            if chunk.num_rows <= FEW_ROWS:  # a key lookup's row: no Arrow kernels
                few = encode_values([few_texts(chunk.column(i), c.type)
                                     for i, c in enumerate(result.columns)], chunk.num_rows, seq)
                if few is not None:
                    yield few
                    seq = few[1]
                    continue
            texts = [to_text(chunk.column(i), c.type) for i, c in enumerate(result.columns)]
            payload, seq = encode_rows(texts, seq)
            yield payload, seq


def _binary_rows(result: RowsResult):
    """Binary-protocol row payloads, a list per chunk of at most ROWS_PER_WRITE rows (a Python
    loop per row: see prepared.py); ARRAY / MAP / STRUCT values go as their text, as in the
    text protocol (MYSQL_TYPE_STRING)."""
    encoders = [value_encoder(mysql_type(c.type)) for c in result.columns]
    for batch in result.batches:
        for start in range(0, batch.num_rows, ROWS_PER_WRITE):
            chunk = batch if batch.num_rows <= ROWS_PER_WRITE else \
                batch.slice(start, ROWS_PER_WRITE)
            columns = [(to_text(column, c.type) if c.type.is_nested else column).to_pylist()
                       for column, c in zip(chunk.columns, result.columns)]
            yield [binary_row(r, encoders) for r in zip(*columns)]


class _lazy_cursor:
    """The rows of a cursor as mysql-mimic's COM_STMT_FETCH iterates them, chunks computed on
    demand in a worker thread. mysql-mimic takes one row more than it sends and drops it when
    a fetch is full, so each new iteration first gives back the row the previous one dropped."""

    def __init__(self, chunks):
        self.chunks, self.rows, self.last = chunks, [], None

    def __aiter__(self):
        if self.last is not None:
            self.rows.insert(0, self.last)
        return self

    async def __anext__(self) -> bytes:
        while not self.rows:
            chunk = await asyncio.to_thread(next, self.chunks, None)
            if chunk is None:
                self.last = None
                raise StopAsyncIteration
            self.rows = chunk
        self.last = self.rows.pop(0)
        return self.last


def _report(e: Exception):
    """An error raised while streaming rows: its own code if it has one, else logged as 1105."""
    if hasattr(e, "client_message") and hasattr(e, "code"):
        return e
    logging.getLogger(__name__).exception("internal error while streaming a result")
    return InternalError.of(e)
