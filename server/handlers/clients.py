"""Handlers of the statements in server/parser/clients.py (entries of dispatch.HANDLERS)."""

from __future__ import annotations

from server.handlers.context import StatementContext
from server.parser.clients import SetTransactionStmt
from server.results import OkResult


def set_transaction(stmt: SetTransactionStmt, ctx: StatementContext) -> OkResult:
    return OkResult()


CLIENT_HANDLERS = {
    SetTransactionStmt: set_transaction,
}
