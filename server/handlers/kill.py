"""KILL [CONNECTION | QUERY] <id>: stop another session's statement, or close its connection.

The connection ids are those SHOW PROCESSLIST and CONNECTION_ID() show. KILL QUERY sets the
session's cancel flag: the executor stops at the next operator or result batch with error 1317
(a single long operator finishes first). KILL CONNECTION also cancels the connection's task.
"""

from __future__ import annotations

from sqlglot import exp

from catalog.errors import DorisError
from server.handlers.context import StatementContext
from server.results import OkResult


class UnknownThread(DorisError):
    code = 1094

    def __init__(self, thread_id: object):
        super().__init__(f"Unknown thread id: {thread_id}")


def kill(stmt: exp.Kill, ctx: StatementContext) -> OkResult:
    target = stmt.this
    try:
        thread_id = int(target.name if isinstance(target, exp.Expression) else target)
    except (TypeError, ValueError):
        raise UnknownThread(target.sql() if isinstance(target, exp.Expression) else target) from None
    session = ctx.session.services.sessions.get(thread_id)
    if session is None:
        raise UnknownThread(thread_id)
    kind = stmt.text("kind").upper() or "CONNECTION"
    session.kill(query_only=kind == "QUERY")
    return OkResult()
