"""RECOVER DATABASE/TABLE/PARTITION, SHOW CATALOG RECYCLE BIN, DROP CATALOG RECYCLE BIN.

The rules and errors live in catalog/recycle_ops.py; the bin itself in catalog/recycle_bin.py.
"""

from __future__ import annotations

from catalog import recycle_ops
from server.handlers import show_filter
from server.handlers.context import StatementContext
from server.parser.recycle_bin import (DropRecycleBinStmt, RecoverDatabaseStmt,
                                       RecoverPartitionStmt, RecoverTableStmt,
                                       ShowRecycleBinStmt)
from server.results import OkResult, RowsResult, text_columns

COLUMNS = ["Type", "Name", "DbId", "TableId", "PartitionId", "DropTime", "DataSize",
           "RemoteDataSize"]


def recover_database(stmt: RecoverDatabaseStmt, ctx: StatementContext) -> OkResult:
    recycle_ops.recover_database(ctx.catalog, stmt.name, stmt.db_id, stmt.new_name)
    return OkResult()


def recover_table(stmt: RecoverTableStmt, ctx: StatementContext) -> OkResult:
    recycle_ops.recover_table(ctx.catalog, stmt.db or ctx.db, stmt.table, stmt.table_id,
                              stmt.new_name)
    return OkResult()


def recover_partition(stmt: RecoverPartitionStmt, ctx: StatementContext) -> OkResult:
    recycle_ops.recover_partition(ctx.catalog, stmt.db or ctx.db, stmt.table, stmt.name,
                                  stmt.partition_id, stmt.new_name)
    return OkResult()


def show_recycle_bin(stmt: ShowRecycleBinStmt, ctx: StatementContext) -> RowsResult:
    with ctx.catalog.lock:
        rows = ctx.catalog.recycle_bin.info_rows()
    return show_filter.apply(text_columns(COLUMNS, rows), show_filter.parse_tail(stmt.tail))


def drop_recycle_bin(stmt: DropRecycleBinStmt, ctx: StatementContext) -> OkResult:
    recycle_ops.erase_instantly(ctx.catalog, stmt.kind, stmt.object_id)
    return OkResult()


HANDLERS = {
    RecoverDatabaseStmt: recover_database,
    RecoverTableStmt: recover_table,
    RecoverPartitionStmt: recover_partition,
    ShowRecycleBinStmt: show_recycle_bin,
    DropRecycleBinStmt: drop_recycle_bin,
}
