"""Handlers of alias function DDL and SHOW FUNCTIONS (server/parser/functions.py,
catalog/alias_functions.py), with Doris's SHOW [FULL] FUNCTIONS columns."""

from __future__ import annotations

import fnmatch
import json

from catalog.alias_functions import (create_alias_function, drop_function, functions_of)
from server.handlers.context import StatementContext
from server.parser.functions import CreateAliasFunctionStmt, DropFunctionStmt, ShowFunctionsStmt
from server.results import OkResult, RowsResult, text_columns

FULL_COLUMNS = ["Signature", "Return Type", "Function Type", "Intermediate Type", "Properties"]


def _db(stmt, ctx: StatementContext) -> str | None:
    return None if stmt.is_global else (stmt.db or ctx.db)


def create(stmt: CreateAliasFunctionStmt, ctx: StatementContext) -> OkResult:
    create_alias_function(ctx.catalog, _db(stmt, ctx), stmt.name, stmt.arg_types,
                          stmt.parameters, stmt.origin)
    return OkResult()


def drop(stmt: DropFunctionStmt, ctx: StatementContext) -> OkResult:
    drop_function(ctx.catalog, _db(stmt, ctx), stmt.name, stmt.arg_types, stmt.if_exists)
    return OkResult()


def show(stmt: ShowFunctionsStmt, ctx: StatementContext) -> RowsResult:
    """A database's functions (SHOW FUNCTIONS) or the global ones (SHOW GLOBAL FUNCTIONS)."""
    db = None if stmt.is_global else (stmt.db or ctx.db)
    if db is not None:
        with ctx.catalog.lock:
            db = ctx.catalog.get_db(db).name
    fns = functions_of(ctx.catalog, db, include_global=stmt.is_global)
    if not stmt.is_global:
        fns = [f for f in fns if f["db"] == db]
    if stmt.like is not None:
        pattern = stmt.like.lower().replace("%", "*").replace("_", "?")
        fns = [f for f in fns if fnmatch.fnmatchcase(f["name"], pattern)]
    if not stmt.full:
        return text_columns(["Function Name"], [(f["name"],) for f in fns])
    rows = [(f["signature"], "", "ALIAS/SCALAR", "",
             json.dumps({"parameter": ", ".join(f["parameters"]), "origin_function":
                         f["origin"]}, separators=(",", ":"))) for f in fns]
    return text_columns(FULL_COLUMNS, rows)


HANDLERS = {CreateAliasFunctionStmt: create, DropFunctionStmt: drop, ShowFunctionsStmt: show}
