"""Handlers of SQL block rules, workload groups and encrypt keys (server/parser/admin_objects.py;
the rules and state in catalog/sql_block_rules.py, catalog/workload_groups.py,
catalog/encrypt_keys.py). The checks statements pass against rules and groups before they run
are server/handlers/statement_checks.py."""

from __future__ import annotations

from catalog import encrypt_keys, sql_block_rules, workload_groups
from catalog.errors import NoDatabaseSelected
from server.handlers.context import StatementContext
from server.handlers.show import like_filter
from server.parser.admin_objects import (EncryptKeyStmt, ShowEncryptKeysStmt,
                                         ShowSqlBlockRuleStmt, ShowWorkloadGroupsStmt,
                                         SqlBlockRuleStmt, WorkloadGroupStmt)
from server.results import OkResult, RowsResult, text_columns


# -- SQL block rules ---------------------------------------------------------------------------
def block_rule(stmt: SqlBlockRuleStmt, ctx: StatementContext) -> OkResult:
    cat = ctx.catalog
    if stmt.action == "CREATE":
        sql_block_rules.create_rule(cat, stmt.names[0], stmt.properties, stmt.if_exists)
    elif stmt.action == "ALTER":
        sql_block_rules.alter_rule(cat, stmt.names[0], stmt.properties)
    else:
        sql_block_rules.drop_rules(cat, stmt.names, stmt.if_exists)
    return OkResult()


def show_block_rules(stmt: ShowSqlBlockRuleStmt, ctx: StatementContext) -> RowsResult:
    return text_columns(sql_block_rules.SHOW_COLUMNS,
                        sql_block_rules.show_rows(ctx.catalog, stmt.name))


# -- workload groups ---------------------------------------------------------------------------
def workload_group(stmt: WorkloadGroupStmt, ctx: StatementContext) -> OkResult:
    cat = ctx.catalog
    if stmt.action == "CREATE":
        workload_groups.create_group(cat, stmt.name, stmt.properties, stmt.if_exists)
    elif stmt.action == "ALTER":
        workload_groups.alter_group(cat, stmt.name, stmt.properties)
    else:
        workload_groups.drop_group(cat, stmt.name, stmt.if_exists)
    return OkResult()


def show_workload_groups(stmt: ShowWorkloadGroupsStmt, ctx: StatementContext) -> RowsResult:
    """Every group for an ADMIN; others see the groups they may use (here: `normal`, which
    every account may use in Doris 2.1)."""
    keep = like_filter(stmt.like)
    access = getattr(ctx.session, "access", None)
    if access is not None and not access.check_global("ADMIN"):
        rows = workload_groups.show_rows(
            ctx.catalog, lambda n: n == workload_groups.NORMAL and keep(n))
    else:
        rows = workload_groups.show_rows(ctx.catalog, keep)
    return text_columns(workload_groups.COLUMNS, rows)


# -- encrypt keys ------------------------------------------------------------------------------
def _key_db(db: str | None, ctx: StatementContext) -> str:
    db = db or ctx.db
    if not db:
        raise NoDatabaseSelected()
    return db


def encrypt_key(stmt: EncryptKeyStmt, ctx: StatementContext) -> OkResult:
    db = _key_db(stmt.db, ctx)
    if stmt.action == "CREATE":
        encrypt_keys.create_key(ctx.catalog, db, stmt.name, stmt.key, stmt.if_exists)
    else:
        encrypt_keys.drop_key(ctx.catalog, db, stmt.name, stmt.if_exists)
    return OkResult()


def show_encrypt_keys(stmt: ShowEncryptKeysStmt, ctx: StatementContext) -> RowsResult:
    rows = encrypt_keys.show_rows(ctx.catalog, _key_db(stmt.db, ctx), like_filter(stmt.like))
    return text_columns(encrypt_keys.COLUMNS, rows)


HANDLERS = {
    SqlBlockRuleStmt: block_rule, ShowSqlBlockRuleStmt: show_block_rules,
    WorkloadGroupStmt: workload_group, ShowWorkloadGroupsStmt: show_workload_groups,
    EncryptKeyStmt: encrypt_key, ShowEncryptKeysStmt: show_encrypt_keys,
}
