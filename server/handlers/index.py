"""Index DDL handlers: ADD INDEX / CREATE INDEX, DROP INDEX, BUILD INDEX, SHOW INDEX[ES] | KEYS."""

from __future__ import annotations

from catalog import table_index
from catalog.storage_statements import (BuildIndexStmt, CreateIndexStmt, DropIndexStmt,
                                        ShowIndexStmt)
from server.handlers.context import StatementContext
from server.results import OkResult, RowsResult, text_columns

SHOW_INDEX_COLUMNS = ["Table", "Non_unique", "Key_name", "Seq_in_index", "Column_name",
                      "Collation", "Cardinality", "Sub_part", "Packed", "Null", "Index_type",
                      "Comment", "Properties"]


def create_index(stmt: CreateIndexStmt, ctx: StatementContext) -> OkResult:
    table_index.add_index(ctx.catalog, stmt.db or ctx.db, stmt.table, stmt.index,
                          stmt.if_not_exists)
    return OkResult()


def drop_index(stmt: DropIndexStmt, ctx: StatementContext) -> OkResult:
    table_index.drop_index(ctx.catalog, stmt.db or ctx.db, stmt.table, stmt.name, stmt.if_exists)
    return OkResult()


def build_index(stmt: BuildIndexStmt, ctx: StatementContext) -> OkResult:
    table_index.build_index(ctx.catalog, stmt.db or ctx.db, stmt.table, stmt.name,
                            stmt.partitions)
    return OkResult()


def show_index(stmt: ShowIndexStmt, ctx: StatementContext) -> RowsResult:
    """One row per index, as Doris's ShowExecutor prints them."""
    with ctx.catalog.lock:
        db = ctx.catalog.get_db(stmt.db or ctx.db)
        table = ctx.catalog.get_table(db.name, stmt.table)
        rows = [(f"{db.name}.{table.name}", "", i.name, "", ",".join(i.columns), "", "", "", "",
                 "", i.index_type, i.comment,
                 "(" + ", ".join(f'"{k}" = "{v}"' for k, v in i.properties.items()) + ")"
                 if i.properties else "")
                for i in table.table_indexes]
    return text_columns(SHOW_INDEX_COLUMNS, rows)
