"""DELETE of the rows a query selects, on Unique tables: Doris 2.x's DeleteFromUsingCommand.

    DELETE FROM t [alias] [PARTITION ...] USING t2 [JOIN t3 ON ...] WHERE cond
    DELETE FROM t WHERE <not a list of delete conditions: a subquery, OR, functions ...>
    =>  INSERT INTO t (visible columns [, __DORIS_SEQUENCE_COL__], __DORIS_DELETE_SIGN__)
        SELECT alias.<column> ..., 1 FROM t [PARTITION (...)] alias [, <USING relations>]
        WHERE cond

Doris parses `USING` into DeleteFromUsingCommand (Unique tables only: "delete command on with
using clause only supports unique key model"); a plain DELETE whose WHERE fails the delete
predicate checks falls back to it, and when that fails too, the predicate error is the one
raised. The rows are written back with the delete sign through the INSERT ... SELECT path
(server/handlers/insert.py): one transaction, one version; the affected rows are the rows
deleted. The sequence column is read from the row as it is, so the delete does not lose to it.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from catalog.errors import AnalysisError, SyntaxError_
from catalog.hidden_columns import has_delete_sign, rewritten_columns
from catalog.names import quote_identifier
from catalog.model import UNIQUE_KEYS, OlapTable
from catalog.storage_statements import DeleteStmt
from server.handlers import insert
from server.handlers.context import StatementContext
from server.results import OkResult
from storage.schema import DELETE_SIGN


def needs_query(stmt: DeleteStmt) -> bool:
    return stmt.using is not None or stmt.condition_error is not None


def delete_selected(stmt: DeleteStmt, ctx: StatementContext) -> OkResult:
    return insert.insert(as_insert(stmt, ctx), ctx)


def as_insert(stmt: DeleteStmt, ctx: StatementContext) -> exp.Insert:
    db = stmt.db or ctx.db
    with ctx.catalog.lock:
        table = ctx.catalog.get_table(db, stmt.table)
    unique = isinstance(table, OlapTable) and table.keys_type == UNIQUE_KEYS
    if not (unique and has_delete_sign(table)):
        if stmt.using is not None:
            raise AnalysisError("delete command on with using clause only supports unique key "
                                "model")
        raise stmt.condition_error
    names = rewritten_columns(table)
    select = query_of(stmt, db, names)
    target = exp.Table(this=exp.to_identifier(table.name, quoted=True),
                       db=exp.to_identifier(db, quoted=True) if db else None)
    columns = [exp.to_identifier(n, quoted=True) for n in [*names, DELETE_SIGN]]
    return exp.Insert(this=exp.Schema(this=target, expressions=columns), expression=select)


def query_of(stmt: DeleteStmt, db: str | None, names: list[str]) -> exp.Select:
    """SELECT <relation>.<name> ..., 1 AS __DORIS_DELETE_SIGN__ FROM the target [, USING's
    relations] WHERE ...: the rows the DELETE writes back (also what its privileges check)."""
    q = quote_identifier
    relation = q(stmt.alias or stmt.table)
    items = "".join(f"{relation}.{q(n)}, " for n in names)
    source = f"{q(db)}.{q(stmt.table)}" if db else q(stmt.table)
    if stmt.partitions:
        source += f" PARTITION ({', '.join(q(p) for p in stmt.partitions)})"
    text = f"SELECT {items}1 AS {q(DELETE_SIGN)} FROM {source} AS {relation}"
    if stmt.using:
        text += f", {stmt.using}"
    if stmt.where:
        text += f" WHERE {stmt.where}"
    try:
        return sqlglot.parse_one(text, read="doris")
    except (ParseError, TokenError) as e:
        raise SyntaxError_(f"Syntax error in line 1:\n{str(e).splitlines()[0]}") from None
