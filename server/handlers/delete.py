"""DELETE FROM t [PARTITION ...] WHERE ...: delete-sign rows on a merge-on-write Unique table
(catalog/delete_sign.py), else a delete-predicate version (catalog/delete.py); with USING, or a
WHERE that is not delete conditions, the rows a query selects (server/handlers/delete_using.py)."""

from __future__ import annotations

import uuid

from catalog.delete import delete_rows
from catalog.delete_sign import delete_by_sign
from catalog.storage_statements import DeleteStmt
from server.handlers.context import StatementContext
from server.handlers.delete_using import delete_selected, needs_query
from server.handlers.insert import check_target
from server.results import OkResult


def delete(stmt: DeleteStmt, ctx: StatementContext) -> OkResult:
    check_target(ctx, stmt.db or ctx.db, stmt.table)
    if needs_query(stmt):  # USING, or a WHERE that is not delete conditions
        return delete_selected(stmt, ctx)
    signed = delete_by_sign(ctx.catalog, ctx.db, stmt, ctx.now.replace(tzinfo=None))
    if signed is not None:
        rows, txn_id = signed
        label = f"delete_{uuid.uuid4().hex[:16]}"
        status = "VISIBLE" if rows else "NO_DATA"
        return OkResult(affected_rows=rows,
                        info=f"{{'label':'{label}', 'status':'{status}', 'txnId':'{txn_id}'}}")
    txn_id = delete_rows(ctx.catalog, ctx.db, stmt)
    label = f"delete_{uuid.uuid4()}"
    return OkResult(info=f"{{'label':'{label}', 'status':'VISIBLE', 'txnId':'{txn_id}'}}")
