"""Handlers of the statements in server/parser/clients.py (entries of dispatch.HANDLERS):
SET TRANSACTION (a no-op, as in Doris) and the multi-catalog statements over the one
`internal` catalog (catalog/multi_catalog.py)."""

from __future__ import annotations

from catalog.errors import DorisError, NotSupported
from catalog.multi_catalog import INTERNAL, INTERNAL_COMMENT, INTERNAL_ID, check_catalog
from server.handlers.context import StatementContext
from server.handlers.show import like_filter
from sqlglot import exp

from server.handlers import views
from server.parser.clients import (CreateCatalogStmt, DropCatalogStmt, SetTransactionStmt,
                                   RenamePartitionStmt, RenameTableStmt, ShowCatalogsStmt,
                                   ShowCreateViewStmt, SwitchCatalogStmt)
from catalog.rename import rename_partition, rename_table
from server.results import OkResult, RowsResult, text_columns

# Catalog types Doris creates with CREATE CATALOG (none of them exists in minidoris).
EXTERNAL_TYPES = ("hms", "hive", "iceberg", "paimon", "hudi", "jdbc", "es", "max_compute",
                  "trino-connector", "lakesoul", "doris", "test")


def set_transaction(stmt: SetTransactionStmt, ctx: StatementContext) -> OkResult:
    return OkResult()


def switch_catalog(stmt: SwitchCatalogStmt, ctx: StatementContext) -> OkResult:
    check_catalog(stmt.catalog)
    return OkResult()


def show_catalogs(stmt: ShowCatalogsStmt, ctx: StatementContext) -> RowsResult:
    rows = [(INTERNAL_ID, INTERNAL, "internal", "Yes", "UNRECORDED", "NULL", INTERNAL_COMMENT)]
    keep = like_filter(stmt.like)
    return text_columns(["CatalogId", "CatalogName", "Type", "IsCurrent", "CreateTime",
                         "LastUpdateTime", "Comment"], [r for r in rows if keep(r[1])])


def create_catalog(stmt: CreateCatalogStmt, ctx: StatementContext) -> OkResult:
    if stmt.name.lower() == INTERNAL:
        if stmt.if_not_exists:
            return OkResult()
        raise DorisError(f"Catalog '{stmt.name}' already exists")
    kind = {k.lower(): v for k, v in stmt.properties.items()}.get("type")
    if not kind:
        raise DorisError("Missing 'type' property")
    if kind.lower() not in EXTERNAL_TYPES:
        raise DorisError(f"Unknown catalog type: {kind}")
    raise NotSupported(f"External catalogs are not supported: minidoris cannot create "
                       f"catalog '{stmt.name}' of type '{kind}'")


def drop_catalog(stmt: DropCatalogStmt, ctx: StatementContext) -> OkResult:
    if stmt.name.lower() == INTERNAL:
        raise DorisError("Internal catalog can't be drop.")
    if stmt.if_exists:
        return OkResult()
    raise DorisError(f"No catalog found with name: {stmt.name}")


CLIENT_HANDLERS = {
    SetTransactionStmt: set_transaction,
    SwitchCatalogStmt: switch_catalog,
    ShowCatalogsStmt: show_catalogs,
    CreateCatalogStmt: create_catalog,
    DropCatalogStmt: drop_catalog,
    ShowCreateViewStmt: lambda stmt, ctx: views.show_create_view(stmt.db, stmt.name, ctx),
    exp.Alter: views.alter_view,  # ALTER VIEW v AS <query>
    RenameTableStmt: lambda s, ctx: rename_table(ctx.catalog, s.db or ctx.db, s.name, s.new_name)
    or OkResult(),
    RenamePartitionStmt: lambda s, ctx: rename_partition(ctx.catalog, s.db or ctx.db, s.table,
                                                         s.name, s.new_name) or OkResult(),
}
