"""DELETE FROM t [PARTITION ...] WHERE ...: a delete-predicate version (catalog/delete.py)."""

from __future__ import annotations

import uuid

from catalog.delete import delete_rows
from catalog.storage_statements import DeleteStmt
from server.handlers.context import StatementContext
from server.results import OkResult


def delete(stmt: DeleteStmt, ctx: StatementContext) -> OkResult:
    txn_id = delete_rows(ctx.catalog, ctx.db, stmt)
    label = f"delete_{uuid.uuid4()}"
    return OkResult(info=f"{{'label':'{label}', 'status':'VISIBLE', 'txnId':'{txn_id}'}}")
