"""Temporary partitions and table swaps: ADD/DROP TEMPORARY PARTITION, REPLACE PARTITION ...
WITH TEMPORARY PARTITION, REPLACE WITH TABLE. The rules live in `catalog/temp_partitions.py`;
these handlers only route."""

from __future__ import annotations

from catalog import temp_partitions as tp
from server.handlers.context import StatementContext
from server.results import OkResult


def add(stmt: tp.AddTempPartitionStmt, ctx: StatementContext) -> OkResult:
    tp.add_temp_partition(ctx.catalog, ctx.db, stmt)
    return OkResult()


def drop(stmt: tp.DropTempPartitionStmt, ctx: StatementContext) -> OkResult:
    tp.drop_temp_partition(ctx.catalog, ctx.db, stmt)
    return OkResult()


def replace_partitions(stmt: tp.ReplacePartitionStmt, ctx: StatementContext) -> OkResult:
    tp.replace_partitions(ctx.catalog, ctx.db, stmt)
    return OkResult()


def replace_table(stmt: tp.ReplaceTableStmt, ctx: StatementContext) -> OkResult:
    tp.replace_table(ctx.catalog, ctx.db, stmt)
    return OkResult()


HANDLERS = {
    tp.AddTempPartitionStmt: add,
    tp.DropTempPartitionStmt: drop,
    tp.ReplacePartitionStmt: replace_partitions,
    tp.ReplaceTableStmt: replace_table,
}
