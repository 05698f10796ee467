"""Handlers of alias function DDL and SHOW FUNCTIONS (server/parser/functions.py,
catalog/alias_functions.py), with Doris's SHOW [FULL] FUNCTIONS columns."""

from __future__ import annotations

import fnmatch
import json

from catalog.alias_functions import (create_alias_function, drop_function, functions_of)
from server.handlers.builtin_functions import builtin_function_names
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


def _like(pattern: str | None):
    """ShowFunctionsStmt.like: the pattern lower-cased, `%` any run, `_` one character."""
    if pattern is None:
        return lambda name: True
    glob = pattern.lower().replace("%", "*").replace("_", "?")
    return lambda name: fnmatch.fnmatchcase(name, glob)


def show(stmt: ShowFunctionsStmt, ctx: StatementContext) -> RowsResult:
    """A database's functions (SHOW FUNCTIONS), the global ones (SHOW GLOBAL FUNCTIONS) or the
    engine's own (SHOW BUILTIN FUNCTIONS, server/handlers/builtin_functions.py)."""
    db = None if stmt.is_global else (stmt.db or ctx.db)
    if db is not None:
        with ctx.catalog.lock:
            db = ctx.catalog.get_db(db).name
    if stmt.builtin:
        keep = _like(stmt.like)
        return text_columns(["Function Name"],
                            [(n,) for n in builtin_function_names() if keep(n)])
    fns = functions_of(ctx.catalog, db, include_global=stmt.is_global)
    if not stmt.is_global:
        fns = [f for f in fns if f["db"] == db]
    keep = _like(stmt.like)
    fns = [f for f in fns if keep(f["name"])]
    if not stmt.full:
        return text_columns(["Function Name"], [(f["name"],) for f in fns])
    rows = [(f["signature"], "", "ALIAS/SCALAR", "",
             json.dumps({"parameter": ", ".join(f["parameters"]), "origin_function":
                         f["origin"]}, separators=(",", ":"))) for f in fns]
    return text_columns(FULL_COLUMNS, rows)


HANDLERS = {CreateAliasFunctionStmt: create, DropFunctionStmt: drop, ShowFunctionsStmt: show}
