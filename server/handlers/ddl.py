"""DDL handlers: CREATE/DROP DATABASE, CREATE/DROP TABLE, CREATE/DROP VIEW (views.py), USE.

The system databases (information_schema, mysql: catalog/system_dbs.py) exist already and can
be neither dropped nor have tables dropped, with Doris's errors."""

from __future__ import annotations

from sqlglot import exp

from catalog.auth import AccessDenied
from catalog.errors import DatabaseExists, DorisError, NotSupported
from catalog.system_dbs import system_db
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
        sysdb = system_db(stmt.this.name)
        if sysdb is not None:
            if not stmt.args.get("exists"):
                raise DatabaseExists(sysdb.NAME)
            return OkResult()
        ctx.catalog.create_database(stmt.this.name, bool(stmt.args.get("exists")))
        return OkResult()
    if kind == "VIEW":
        return views.create_view(stmt, ctx)
    raise NotSupported(f"CREATE {kind} is not supported yet")


def drop(stmt: exp.Drop, ctx: StatementContext) -> OkResult:
    kind = (stmt.args.get("kind") or "").upper()
    if_exists = bool(stmt.args.get("exists"))
    force = bool(stmt.args.get("force"))  # FORCE: past the recycle bin
    targets = stmt.args.get("tables") or ([stmt.this] if stmt.this is not None else [])
    if kind in ("DATABASE", "SCHEMA"):
        for target in targets:
            _check_not_system(target.name, ctx)
        for target in targets:
            ctx.catalog.drop_database(target.name, if_exists, force)
        return OkResult()
    if kind == "TABLE":
        if any(system_db(t.db or ctx.db) is not None for t in targets):
            raise DorisError("Drop table from this database is not allowed.")
        for table in targets:
            ctx.catalog.drop_table(table.db or ctx.db, table.name, if_exists, force)
        return OkResult()
    if kind == "VIEW":
        for view in targets:
            drop_view(ctx.catalog, view.db or ctx.db, view.name, if_exists)
        return OkResult()
    raise NotSupported(f"DROP {kind} is not supported yet")


def _check_not_system(name: str, ctx: StatementContext) -> None:
    """DROP DATABASE of information_schema or mysql: Doris's 1044 (MySQL-compatible databases
    cannot be dropped, whoever asks)."""
    sysdb = system_db(name)
    if sysdb is not None:
        access = getattr(ctx.session, "access", None)
        user = access.name if access is not None else "root"
        raise AccessDenied(f"Access denied for user '{user}' to database '{sysdb.NAME}'", 1044)


def use(stmt: exp.Use, ctx: StatementContext) -> OkResult:
    name = stmt.this.name if stmt.this is not None else ""
    sysdb = system_db(name)
    if sysdb is not None:
        name = sysdb.NAME
    else:
        ctx.catalog.get_db(name)
    ctx.session.database = name
    return OkResult()
