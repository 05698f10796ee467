"""A client session: current database, session variables, and statement execution.

`execute(sql)` runs in a worker thread (never on the protocol's event loop): it splits the
COM_QUERY into statements, parses each, and dispatches it; it returns one result per statement
that ran, and stops at the first error (returned in place of that statement's result).
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
import time
from datetime import datetime, timezone

from mysql_mimic.constants import KillKind
from mysql_mimic.errors import MysqlError
from mysql_mimic.session import BaseSession
from sqlglot import exp

from catalog import access
from catalog.system_dbs import system_db
from catalog.errors import DorisError, InternalError, StorageIOError, UnknownDatabase
from catalog.multi_catalog import database_name
from executor.expressions.errors import ExpressionError
from storage import cpu_slots
from storage.errors import CorruptionError
from server import short_circuit
from server.dispatch import run_statement
from server.handlers.context import StatementContext
from server.limits import StatementTimer
from server.parser import query_cache
from server.parser.fast_values import parse_fast_insert
from server.parser.literals import split_prepared
from server.parser.pipes import PIPES_AS_CONCAT, enabled as pipes_enabled
from server.parser.statement import parse_statement, split_statements
from server.protocol.prepared import bind_sql
from server.results import OkResult
from server.variables import new_session_variables

log = logging.getLogger(__name__)

DESCRIBABLE = (exp.Select, exp.Union, exp.Intersect, exp.Except)  # what COM_STMT_PREPARE describes


class DorisSession(BaseSession):
    def __init__(self, services) -> None:
        self.services = services
        self.variables = new_session_variables(services.global_variables)
        self.username = None
        self.access = None                  # the logged-in account's privileges (server/auth.py)
        self.database: str | None = None
        self.connection = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.cancel = threading.Event()     # KILL QUERY: the running statement stops
        self.timer = StatementTimer(self.cancel)  # query_timeout / insert_timeout
        self.login_time = datetime.now()
        self.host = ""
        self.current_sql = ""               # SHOW PROCESSLIST: what runs now, since when
        self.statement_started = 0.0
        # tablet snapshots of this session's queries still streaming (server/handlers/query.py);
        # released when the connection closes, so a client gone mid-result frees them
        self.snapshots: list[list] = []
        self.user_variables: dict[str, object] = {}  # SET @x = ...; read as @x (lower-cased names)
        self.found_rows = 0                 # FOUND_ROWS(): rows of the last SELECT sent
        self.last_insert: tuple | None = None  # SHOW LAST INSERT (server/handlers/insert.py)
        # key lookup templates whose privilege check passed: (catalog epoch, account) it held
        # for (server/short_circuit.py)
        self.short_circuit_checked: dict[tuple, tuple[int, int]] = {}

    @property
    def connection_id(self) -> int:
        return getattr(self.connection, "connection_id", 0)

    async def init(self, connection) -> None:
        self.connection = connection
        self.loop = asyncio.get_running_loop()
        peer = connection.stream.writer.get_extra_info("peername") if hasattr(connection, "stream") else None
        self.host = f"{peer[0]}:{peer[1]}" if peer else ""
        sessions = getattr(self.services, "sessions", None)
        if sessions is not None:
            sessions[self.connection_id] = self
        if self.database:  # the handshake named a database: it must exist (as in Doris)
            await self.use(self.database)

    async def close(self) -> None:
        self.timer.disarm()
        for held in list(self.snapshots):
            for snapshot in held:
                snapshot.release()
            spill = getattr(held, "spill", None)  # server/handlers/query.py:_Held
            if spill is not None:
                spill.cleanup()
        self.snapshots.clear()
        sessions = getattr(self.services, "sessions", None)
        if sessions is not None and sessions.get(self.connection_id) is self:
            del sessions[self.connection_id]
        self.connection = None

    def kill(self, query_only: bool) -> None:
        """KILL QUERY stops the running statement; KILL CONNECTION also closes the connection."""
        self.cancel.set()
        if not query_only and self.connection is not None and self.loop is not None:
            self.loop.call_soon_threadsafe(self.connection.kill, KillKind.CONNECTION)

    async def use(self, database: str) -> None:
        try:
            database = database_name(database)  # `internal.db`, as Doris 2.x clients send it
        except DorisError as e:
            self.database = None
            raise MysqlError(e.client_message(), code=e.code) from None
        sysdb = system_db(database)
        if sysdb is not None:  # information_schema, mysql
            self.database = sysdb.NAME
            return
        if database not in self.services.catalog.dbs:
            err = UnknownDatabase(database)
            self.database = None
            raise MysqlError(err.client_message(), code=err.code)
        if self.access is not None and not self.access.visible_db(database):
            self.database = None
            raise MysqlError(f"Access denied for user '{self.access.name}' to database "
                             f"'{database}'", code=1044)
        self.database = database

    def describe(self, sql: str) -> list:
        """The result columns of a prepared query (COM_STMT_PREPARE), its parameters bound to
        NULL and its rows limited to none; [] for statements that return no rows. A DorisError
        if the query cannot be analysed (unknown table or column)."""
        statements = split_statements(sql)
        if len(statements) != 1:
            return []
        stmt = parse_statement(*statements[0])
        if not isinstance(stmt, DESCRIBABLE):
            return []
        ctx = StatementContext(self.services.catalog, self.services.engine, self.services.pool,
                               self, datetime.now(timezone.utc).astimezone(), sql)
        return run_statement(stmt.limit(0), ctx).columns

    def short_circuit_prepared(self, stmt, values: list) -> list | None:
        """`short_circuit` of a prepared statement executed with `values`: its split into a
        template and literals made from the parameters (server/parser/literals.py), the text
        bound only when a plan must be made."""
        try:
            segments = stmt.__dict__.setdefault("literal_segments", {})
            split = split_prepared(stmt.sql, stmt.spots, values, segments)
            if split is None:
                return self.short_circuit(bind_sql(stmt.sql, stmt.spots, values))
            return short_circuit.answer_split(
                self, split, lambda: bind_sql(stmt.sql, stmt.spots, values))
        except Exception:  # noqa: BLE001 - the general path runs it again and reports the error
            log.debug("short circuit failed for %.200r", stmt.sql, exc_info=True)
            return None

    def short_circuit(self, sql: str) -> list | None:
        """The results of `sql` when it is answered without a parse, bind or thread hop (a
        key lookup or a constant query, server/short_circuit.py; safe on the event loop), else
        None: run `execute` in a worker thread."""
        try:
            return short_circuit.answer(self, sql)
        except Exception:  # noqa: BLE001 - the general path runs it again and reports the error
            log.debug("short circuit failed for %.200r", sql, exc_info=True)
            return None

    def execute(self, sql: str) -> list:
        """Results (OkResult / RowsResult) of each statement; a DorisError ends the list."""
        self.timer.disarm()  # the previous statement's timeout (it covered its streaming)
        self.cancel.clear()
        self.current_sql, self.statement_started = sql, time.time()
        token = access.CURRENT.set(self.access)  # SHOW / information_schema filter by it
        try:
            with cpu_slots.slot(_lane(sql, self.variables)):  # one of the statements running at once
                return self._execute(sql)
        finally:
            access.CURRENT.reset(token)
            self.current_sql = ""

    def _execute(self, sql: str) -> list:
        out: list = []
        # sql_mode PIPES_AS_CONCAT changes what `||` means: such texts bypass the text caches
        pipes = "||" in sql
        fast = query_cache.cached(sql) if not pipes else None
        if fast is None:
            fast = parse_fast_insert(sql)
        try:
            statements = [(sql, None)] if fast is not None else split_statements(sql)
        except DorisError as e:
            return [e]
        if not statements:
            return [OkResult()]
        metrics = getattr(self.services, "metrics", None)  # /metrics (server/metrics.py)
        for text, tokens in statements:
            log.debug("connection %s runs: %.2000s", self.connection_id, text)
            started, ran = time.time(), len(out)
            try:
                if fast is None and len(statements) == 1 and not pipes:
                    fast = query_cache.lookup(tokens)
                if fast is not None:
                    stmt = fast
                else:
                    mode = PIPES_AS_CONCAT.set(pipes and pipes_enabled(
                        self.variables.get("sql_mode")))
                    try:
                        stmt = parse_statement(text, tokens)
                    finally:
                        PIPES_AS_CONCAT.reset(mode)
                    if len(statements) == 1 and not pipes:
                        query_cache.remember(sql, text, tokens, stmt)
                ctx = StatementContext(self.services.catalog, self.services.engine,
                                       self.services.pool, self,
                                       datetime.now(timezone.utc).astimezone(), text,
                                       as_sent=True)
                self.timer.arm(stmt, self.variables)
                # judged before running: binding rewrites the tree (@@var, DATABASE() become
                # literals that must not be kept)
                constant = len(statements) == 1 and not pipes and short_circuit.is_constant(stmt)
                out.append(run_statement(stmt, ctx))
                if constant:
                    short_circuit.remember_constant(sql, out[-1])
            except (DorisError, ExpressionError) as e:
                out.append(self.timer.translate(e))
                break
            except CorruptionError as e:  # a damaged file: the operator must see which
                log.error("statement failed in storage: %s: %r", e, text[:200])
                out.append(e)
                break
            except Exception as e:  # the connection loop boundary: log, report 1105
                failed = StorageIOError.of(e)  # a full or read-only disk: not a bug
                if failed is not None:
                    log.warning("statement failed: %s: %r", failed.message, text[:200])
                    out.append(failed)
                    break
                log.exception("internal error running %r", text[:500])
                out.append(InternalError.of(e, text))
                break
            finally:
                if metrics is not None:
                    metrics.record(time.time() - started,
                                   len(out) > ran and isinstance(out[-1], Exception))
        return out


def _lane(sql: str, variables) -> str:
    """The CPU slots a statement takes (storage/cpu_slots.py): an INSERT runs as a load, in
    slots of its own, as Doris's loads run in the BE's load channels and flush threads rather
    than among the queries' pipeline tasks; under the session's group commit, in the group
    commit lane (it only appends its rows to a group)."""
    head = sql.lstrip()[:6]
    if head.upper() != "INSERT":
        return cpu_slots.QUERY
    mode = str(variables.get("group_commit") or "off_mode").lower()
    if mode == "off_mode" or _SELECT.search(sql):  # INSERT ... SELECT is never grouped
        return cpu_slots.LOAD
    return cpu_slots.GROUP_COMMIT


_SELECT = re.compile(r"\bselect\b", re.IGNORECASE)
