"""ADMIN statements: FE configs (SET / SHOW FRONTEND CONFIG), ADMIN COMPACT TABLE, and
minidoris's hooks into the dynamic partition scheduler (RUN DYNAMIC PARTITION, SET DYNAMIC
PARTITION TIME)."""

from __future__ import annotations

from datetime import datetime

from catalog.compaction import CompactionError, tablet_refs
from catalog.errors import AnalysisError, DdlError
from catalog.statements import (AdminCompactTableStmt, AdminRunDynamicPartitionStmt, AdminSetConfigStmt,
                                AdminSetDynamicPartitionTimeStmt, AdminShowConfigStmt)
from server.handlers.context import StatementContext
from server.handlers.show import like_filter
from server.results import OkResult, RowsResult, text_columns

CONFIG_COLUMNS = ["Key", "Value", "Type", "IsMutable", "MasterOnly", "Comment"]


def set_config(stmt: AdminSetConfigStmt, ctx: StatementContext) -> OkResult:
    for key, value in stmt.properties.items():
        ctx.fe_config.set(key, value)
    return OkResult()


def show_config(stmt: AdminShowConfigStmt, ctx: StatementContext) -> RowsResult:
    return text_columns(CONFIG_COLUMNS, ctx.fe_config.rows(like_filter(stmt.like)))


def run_dynamic_partition(stmt: AdminRunDynamicPartitionStmt, ctx: StatementContext) -> OkResult:
    if stmt.table is not None:
        db = stmt.db or ctx.db
        with ctx.catalog.lock:
            ctx.catalog.get_table(db, stmt.table)
        ctx.dynamic.run_pass(db_name=db, table_name=stmt.table)
        return OkResult()
    if stmt.db is not None:
        ctx.catalog.get_db(stmt.db)
    ctx.dynamic.run_pass(db_name=stmt.db)
    return OkResult()


def set_dynamic_partition_time(stmt: AdminSetDynamicPartitionTimeStmt,
                               ctx: StatementContext) -> OkResult:
    fixed = None
    if stmt.value is not None:
        try:
            fixed = datetime.fromisoformat(stmt.value.strip())
        except ValueError:
            raise AnalysisError(f"Invalid time: '{stmt.value}'. Expected "
                                "'yyyy-MM-dd HH:mm:ss'") from None
        fixed = fixed.replace(tzinfo=None)
    ctx.dynamic.set_time(fixed)
    return OkResult()


def compact_table(stmt: AdminCompactTableStmt, ctx: StatementContext) -> OkResult:
    """Doris sends a compaction task of the type to every tablet (replica) of the partition
    and returns; minidoris runs them before replying, so the statement's effect is visible
    when it returns (a tablet whose policy picks nothing is left as it is)."""
    db = stmt.db or ctx.db
    with ctx.catalog.lock:
        table = ctx.catalog.get_table(db, stmt.table)
        partition = table.partition_by_name(stmt.partitions[0])
        if partition is None:
            raise DdlError(f"Partition does not exist. name: {stmt.partitions[0]}")
        pid = partition.partition_id
    scheduler = ctx.session.services.compaction
    for ref in tablet_refs(ctx.catalog):
        if ref.table_id == table.table_id and ref.partition_id == pid:
            try:
                scheduler.run_now(ref, stmt.compaction_type)
            except CompactionError:
                continue  # the producer compacted the tablet meanwhile: nothing lost
    return OkResult()
