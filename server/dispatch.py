"""Statement dispatch: a table from statement type to handler. Nothing else decides routing."""

from __future__ import annotations

from typing import Callable

from sqlglot import exp

from catalog.errors import NotSupported
from catalog.statements import (CreateTableStmt, DescStmt, ExplainStmt, ShowCreateTableStmt,
                                ShowPartitionsStmt)
from server.handlers import ddl, explain, insert, query, set_var, show
from server.handlers.context import StatementContext
from server.parser.fast_values import FastInsert
from server.results import OkResult, RowsResult


def _ok(stmt, ctx: StatementContext) -> OkResult:
    return OkResult()


def _command(stmt: exp.Command, ctx: StatementContext):
    text = f"{stmt.this} {stmt.expression.sql() if stmt.expression is not None else ''}".strip()
    raise NotSupported(f"Unsupported statement: {text[:200]}")


HANDLERS: dict[type, Callable[[object, StatementContext], OkResult | RowsResult]] = {
    CreateTableStmt: ddl.create_table,
    ShowPartitionsStmt: show.show_partitions,
    ShowCreateTableStmt: show.show_create_table,
    DescStmt: show.desc,
    ExplainStmt: explain.explain,
    exp.Select: query.query,
    exp.Subquery: query.query,
    exp.Union: query.query,
    exp.Intersect: query.query,
    exp.Except: query.query,
    exp.Insert: insert.insert,
    FastInsert: insert.fast_insert,
    exp.Create: ddl.create,
    exp.Drop: ddl.drop,
    exp.Use: ddl.use,
    exp.Show: show.show,
    exp.Set: set_var.set_statement,
    exp.Transaction: _ok,
    exp.Commit: _ok,
    exp.Rollback: _ok,
    exp.Command: _command,
}


def run_statement(stmt: object, ctx: StatementContext) -> OkResult | RowsResult:
    handler = HANDLERS.get(type(stmt))
    if handler is None:
        raise NotSupported(f"Unsupported statement: {type(stmt).__name__}")
    return handler(stmt, ctx)
