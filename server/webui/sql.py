"""Statements the web UI runs, always as the caller's account through a DorisSession of its
own (so privileges, SHOW filtering and errors are exactly the MySQL port's).

`run` is for the pages' own statements (SHOW PROC, SHOW PROCESSLIST, ...): a fresh session
each time. `run_playground` runs the Playground's SQL in the login's session (its database and
SET variables persist between runs); while it runs the session is listed in the server's
sessions under the login's connection id, so SHOW PROCESSLIST shows it and KILL QUERY stops it.
"""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass
from decimal import Decimal

from catalog.errors import DorisError, UnknownDatabase
from executor.expressions.errors import ExpressionError
from server.results import OkResult, RowsResult
from server.webui.logins import Caller, next_connection_id as _next_id

MAX_ROWS = 1000  # rows the Playground shows (the rest is counted, not kept)


class StatementFailed(Exception):
    """A statement's error, with the MySQL error text the client would get."""


@dataclass
class WebConnection:
    """What a DorisSession asks of its connection: only its id (no socket to close)."""

    connection_id: int


def new_session(services, caller: Caller, db: str | None = None):
    from server.session import DorisSession  # noqa: PLC0415 - session imports the handlers
    session = DorisSession(services)
    session.access, session.username = caller.access, caller.name
    session.host = caller.access.remote_ip
    session.database = db or None
    return session


def run(services, caller: Caller, sql: str, db: str | None = None):
    """The last result of `sql` as the caller (a RowsResult or OkResult); StatementFailed."""
    return _last(new_session(services, caller, db).execute(sql))


def _last(results: list):
    result = results[-1]
    if isinstance(result, Exception):
        raise StatementFailed(result.client_message() if hasattr(result, "client_message")
                              else str(result))
    return result


def table_of(result) -> tuple[list[str], list[list]]:
    """Column names and rows (values as JSON-able Python) of a RowsResult, every row."""
    names, rows, _ = collect(result, limit=None)
    return names, rows


def collect(result, limit: int | None = MAX_ROWS) -> tuple[list[str], list[list], int]:
    """Names, at most `limit` rows and the total row count; the stream is closed early."""
    if not isinstance(result, RowsResult):
        return [], [], 0
    names, rows, total = [c.name for c in result.columns], [], 0
    batches = result.batches
    try:
        for batch in batches:
            total += batch.num_rows
            room = batch.num_rows if limit is None else max(0, limit - len(rows))
            if room:
                columns = [c.to_pylist() for c in batch.slice(0, room).columns]
                rows += [[_plain(v) for v in row] for row in zip(*columns)]
    finally:
        close = getattr(batches, "close", None)
        if close is not None:
            close()  # releases the query's tablet snapshots
    return names, rows, total


def _plain(v):
    if isinstance(v, (dt.date, dt.datetime, dt.time, dt.timedelta, Decimal)):
        return str(v)
    if isinstance(v, bytes):
        return v.decode("utf-8", errors="replace")
    if isinstance(v, (list, dict)):
        return str(v)
    return v


def run_playground(services, caller: Caller, sql: str, db: str | None) -> dict:
    """The Playground's reply: a result set, an OK with affected rows, or the error."""
    login = caller.login
    if login is not None and not login.lock.acquire(blocking=False):
        return {"error": "a statement of this login is still running; cancel it first"}
    try:
        session = _playground_session(services, caller)
        if db:
            denied = _cannot_use(services, caller, db)
            if denied:
                return {"error": denied}
            session.database = db
        cid = login.connection_id if login is not None else _next_id()
        session.connection = WebConnection(cid)  # its id in SHOW PROCESSLIST and KILL
        services.sessions[cid] = session
        try:
            return _run_in(session, sql)
        finally:
            services.sessions.pop(cid, None)
    finally:
        if login is not None:
            login.lock.release()


def _playground_session(services, caller: Caller):
    """The login's session (its database and variables persist), or a new one."""
    login = caller.login
    session = login.session if login is not None else None
    if session is None or session.access.user is not caller.access.user:
        session = new_session(services, caller)
        if login is not None:
            login.session = session
    session.access = caller.access  # privileges as of now
    return session


def _cannot_use(services, caller: Caller, db: str) -> str | None:
    """Why the caller cannot use `db` (as `USE db` on the MySQL port says), or None."""
    if db.lower() == "information_schema":
        return None
    if db not in services.catalog.dbs:
        return UnknownDatabase(db).client_message()
    if not caller.access.visible_db(db):
        return f"Access denied for user '{caller.name}' to database '{db}'"
    return None


def _run_in(session, sql: str) -> dict:
    started = time.monotonic()
    try:
        result = _last(session.execute(sql))
        names, rows, total = collect(result)  # a streamed result can still fail (KILL)
    except StatementFailed as e:
        return {"error": str(e)}
    except (DorisError, ExpressionError) as e:
        return {"error": e.client_message()}
    elapsed = int((time.monotonic() - started) * 1000)
    if isinstance(result, OkResult):
        return {"type": "exec_status", "affected": result.affected_rows, "time": elapsed,
                "db": session.database}
    return {"type": "result_set", "columns": names, "rows": rows, "total": total,
            "truncated": total > len(rows), "time": elapsed, "db": session.database}
