"""DDL handlers: CREATE/DROP DATABASE, CREATE/DROP TABLE, CREATE/DROP VIEW (views.py), USE."""

from __future__ import annotations

from sqlglot import exp

from catalog import information_schema
from catalog.errors import NotSupported
from catalog.statements import CreateTableStmt
from catalog.views import drop_view
from server.handlers import views
from server.handlers.context import StatementContext
from server.results import OkResult


def create_table(stmt: CreateTableStmt, ctx: StatementContext) -> OkResult:
    if stmt.like is not None:  # CREATE TABLE t2 LIKE t1
        from server.handlers.create_table_like import like_statement
        stmt = like_statement(stmt, ctx)
    if stmt.query is not None:  # CREATE TABLE ... AS <query>
        from server.handlers.create_table_as import create_table_as
        return create_table_as(stmt, ctx, _create_table)
    return _create_table(stmt, ctx)


def _create_table(stmt: CreateTableStmt, ctx: StatementContext) -> OkResult:
    # Dynamic partitions are created with the table, at the scheduler's clock.
    ctx.catalog.create_table(ctx.db, stmt, dynamic_now=ctx.dynamic.now(),
                             max_dynamic_partitions=ctx.dynamic.max_partitions())
    ctx.dynamic.table_created(stmt.db or ctx.db, stmt.name)
    return OkResult()


def create(stmt: exp.Create, ctx: StatementContext) -> OkResult:
    kind = (stmt.args.get("kind") or "").upper()
    if kind in ("DATABASE", "SCHEMA"):
        ctx.catalog.create_database(stmt.this.name, bool(stmt.args.get("exists")))
        return OkResult()
    if kind == "VIEW":
        return views.create_view(stmt, ctx)
    raise NotSupported(f"CREATE {kind} is not supported yet")


def drop(stmt: exp.Drop, ctx: StatementContext) -> OkResult:
    kind = (stmt.args.get("kind") or "").upper()
    if_exists = bool(stmt.args.get("exists"))
    targets = stmt.args.get("tables") or ([stmt.this] if stmt.this is not None else [])
    if kind in ("DATABASE", "SCHEMA"):
        for target in targets:
            ctx.catalog.drop_database(target.name, if_exists)
        return OkResult()
    if kind == "TABLE":
        for table in targets:
            ctx.catalog.drop_table(table.db or ctx.db, table.name, if_exists)
        return OkResult()
    if kind == "VIEW":
        for view in targets:
            drop_view(ctx.catalog, view.db or ctx.db, view.name, if_exists)
        return OkResult()
    raise NotSupported(f"DROP {kind} is not supported yet")


def use(stmt: exp.Use, ctx: StatementContext) -> OkResult:
    name = stmt.this.name if stmt.this is not None else ""
    if name.lower() == information_schema.NAME:
        name = information_schema.NAME
    else:
        ctx.catalog.get_db(name)
    ctx.session.database = name
    return OkResult()
