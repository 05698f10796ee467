"""CREATE / DROP / SHOW ROW POLICY (catalog/row_policy.py; ADMIN only, as Doris's
CreatePolicyStmt). CREATE binds `SELECT * FROM t WHERE <predicate>` first, so a predicate
naming an unknown column or function is refused with the binder's error and nothing is kept."""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from catalog import row_policy
from catalog.errors import AnalysisError
from server.handlers.context import StatementContext
from server.handlers.query import describe_query
from server.parser.row_policy import CreateRowPolicyStmt, DropRowPolicyStmt, ShowRowPolicyStmt
from server.results import OkResult, RowsResult, text_columns

SHOW_COLUMNS = ["PolicyName", "DbName", "TableName", "Type", "FilterType", "WherePredicate",
                "User", "Role", "OriginStmt"]


def _table(ctx: StatementContext, db: str | None, name: str):
    with ctx.catalog.lock:
        db_name = ctx.catalog.get_db(db or ctx.db).name
        return db_name, ctx.catalog.get_table(db_name, name)


def create_row_policy(stmt: CreateRowPolicyStmt, ctx: StatementContext) -> OkResult:
    db, table = _table(ctx, stmt.db, stmt.table)
    try:
        condition = sqlglot.parse_one(stmt.predicate, read="doris")
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError):
        raise AnalysisError(f"Syntax error in row policy predicate: {stmt.predicate}") from None
    query = exp.select("*").from_(exp.table_(table.name, db=db, quoted=True)).where(condition)
    describe_query(query, ctx, db)  # unknown columns, functions, types: refused here
    row_policy.create(ctx.catalog, row_policy.RowPolicy(
        stmt.name, table.table_id, stmt.filter_type, condition.sql(dialect="doris"),
        stmt.user, stmt.role, stmt.origin), stmt.if_not_exists)
    return OkResult()


def drop_row_policy(stmt: DropRowPolicyStmt, ctx: StatementContext) -> OkResult:
    _, table = _table(ctx, stmt.db, stmt.table)
    row_policy.drop(ctx.catalog, table.table_id, stmt.name, stmt.user, stmt.role,
                    stmt.if_exists)
    return OkResult()


def show_row_policy(stmt: ShowRowPolicyStmt, ctx: StatementContext) -> RowsResult:
    rows = []
    with ctx.catalog.lock:
        for p in ctx.catalog.row_policies:
            if stmt.user is not None and p.user != stmt.user:
                continue
            if stmt.role is not None and p.role != stmt.role:
                continue
            try:
                db, table = ctx.catalog.find_table_by_id(p.table_id)
            except Exception:  # noqa: BLE001 - its table was dropped: nothing to show
                continue
            rows.append((p.name, db.name, table.name, "ROW", p.filter_type, p.predicate,
                         p.user, p.role, p.origin))
    return text_columns(SHOW_COLUMNS, rows)


HANDLERS = {CreateRowPolicyStmt: create_row_policy, DropRowPolicyStmt: drop_row_policy,
            ShowRowPolicyStmt: show_row_policy}
