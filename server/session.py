"""A client session: current database, session variables, and statement execution.

`execute(sql)` runs in a worker thread (never on the protocol's event loop): it splits the
COM_QUERY into statements, parses each, and dispatches it; it returns one result per statement
that ran, and stops at the first error (returned in place of that statement's result).
"""

from __future__ import annotations

import logging
from datetime import datetime, timezone

from mysql_mimic.errors import MysqlError
from mysql_mimic.session import BaseSession

from catalog import information_schema
from catalog.errors import DorisError, InternalError, UnknownDatabase
from executor.expressions.errors import ExpressionError
from server.dispatch import run_statement
from server.handlers.context import StatementContext
from server.parser.fast_values import parse_fast_insert
from server.parser.statement import parse_statement, split_statements
from server.results import OkResult
from server.variables import new_session_variables

log = logging.getLogger(__name__)


class DorisSession(BaseSession):
    def __init__(self, services) -> None:
        self.services = services
        self.variables = new_session_variables(services.global_variables)
        self.username = None
        self.database: str | None = None
        self.connection = None

    @property
    def connection_id(self) -> int:
        return getattr(self.connection, "connection_id", 0)

    async def init(self, connection) -> None:
        self.connection = connection
        if self.database:  # the handshake named a database: it must exist (as in Doris)
            await self.use(self.database)

    async def close(self) -> None:
        self.connection = None

    async def use(self, database: str) -> None:
        if database.lower() == information_schema.NAME:
            self.database = information_schema.NAME
            return
        if database not in self.services.catalog.dbs:
            err = UnknownDatabase(database)
            self.database = None
            raise MysqlError(err.client_message(), code=err.code)
        self.database = database

    def execute(self, sql: str) -> list:
        """Results (OkResult / RowsResult) of each statement; a DorisError ends the list."""
        out: list = []
        fast = parse_fast_insert(sql)
        try:
            statements = [(sql, None)] if fast is not None else split_statements(sql)
        except DorisError as e:
            return [e]
        if not statements:
            return [OkResult()]
        for text, tokens in statements:
            try:
                stmt = fast if fast is not None else parse_statement(text, tokens)
                ctx = StatementContext(self.services.catalog, self.services.engine,
                                       self.services.pool, self,
                                       datetime.now(timezone.utc).astimezone(), text)
                out.append(run_statement(stmt, ctx))
            except (DorisError, ExpressionError) as e:
                out.append(e)
                break
            except Exception as e:  # the connection loop boundary: log, report 1105
                log.exception("internal error running %r", text[:500])
                out.append(InternalError(f"Unexpected exception: {type(e).__name__}: {e}"))
                break
        return out
