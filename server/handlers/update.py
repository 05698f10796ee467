"""UPDATE on Unique tables, as Doris 2.x's UpdateCommand runs it: an INSERT of whole rows.

    UPDATE t [alias] SET c = expr [, ...] [FROM t2 [JOIN t3 ON ...]] [WHERE cond]
    =>  INSERT INTO t (visible columns [, __DORIS_SEQUENCE_COL__])
        SELECT <expr for a SET column, else alias.column> FROM t alias [, t2 JOIN t3 ...]
        [WHERE cond]

The rows the WHERE selects are written again with their new values, in one transaction and one
version, through the INSERT ... SELECT path (server/handlers/insert.py): the Unique model's
replace (or merge-on-write's delete bitmap) makes the new row the one read. The hidden sequence
column is selected from the row as it is, as Doris does (UpdateCommand.completeQueryPlan), so
an update never loses to the row it replaces. Only Unique tables, only value columns.
"""

from __future__ import annotations

from sqlglot import exp

from catalog.errors import AnalysisError
from catalog.hidden_columns import rewritten_columns
from catalog.model import UNIQUE_KEYS, OlapTable
from server.handlers import insert
from server.handlers.context import StatementContext
from server.results import OkResult


def update(stmt: exp.Update, ctx: StatementContext) -> OkResult:
    return insert.insert(as_insert(stmt, ctx), ctx)


def as_insert(stmt: exp.Update, ctx: StatementContext) -> exp.Insert:
    """The INSERT ... SELECT that carries out `stmt` (also what EXPLAIN UPDATE would plan)."""
    target = stmt.this
    if not isinstance(target, exp.Table):
        raise AnalysisError("target table in update command should be an olapTable")
    db = target.db or ctx.db
    with ctx.catalog.lock:
        table = ctx.catalog.get_table(db, target.name)
    if not isinstance(table, OlapTable):
        raise AnalysisError("target table in update command should be an olapTable")
    if table.keys_type != UNIQUE_KEYS:
        raise AnalysisError("Only unique table could be updated.")
    relation = target.alias_or_name
    values = _assignments(stmt, table, relation)
    names = rewritten_columns(table)
    items = []
    for name in names:
        value = values.get(name.lower())
        if value is None:
            items.append(exp.column(name, table=relation, quoted=True))
        else:
            items.append(exp.alias_(value.copy(), name, quoted=True))
    source = exp.Table(this=exp.to_identifier(table.name, quoted=True),
                       db=exp.to_identifier(db, quoted=True) if db else None,
                       alias=exp.TableAlias(this=exp.to_identifier(relation, quoted=True)))
    select = exp.Select(expressions=items).from_(source)
    extra = stmt.args.get("from_") or stmt.args.get("from")
    if extra is not None:  # UPDATE ... FROM t2 JOIN t3 ON ...: joined with the target's rows
        first = extra.this.copy()
        joins = first.args.pop("joins", None) or []
        select = select.join(first)
        for j in joins:
            select = select.join(j)
    where = stmt.args.get("where")
    if where is not None:
        select = select.where(where.this.copy())
    schema = exp.Schema(this=exp.Table(this=exp.to_identifier(table.name, quoted=True),
                                       db=exp.to_identifier(db, quoted=True) if db else None),
                        expressions=[exp.to_identifier(n, quoted=True) for n in names])
    return exp.Insert(this=schema, expression=select)


def _assignments(stmt: exp.Update, table: OlapTable, relation: str) -> dict[str, exp.Expression]:
    """SET c = expr, by column name (lower case); Doris's errors for keys and unknown columns."""
    out: dict[str, exp.Expression] = {}
    for eq in stmt.expressions:
        column = eq.this
        if not isinstance(eq, exp.EQ) or not isinstance(column, exp.Column):
            raise AnalysisError("the left side of an UPDATE assignment must be a column")
        if column.table and column.table.lower() not in (relation.lower(), table.name.lower()):
            raise AnalysisError(f"Unknown column '{column.name}' in '{column.table}'")
        target = table.column(column.name)
        if target is None:
            raise AnalysisError(f"Unknown column '{column.name}' in '{table.name}'")
        if target.is_key:
            raise AnalysisError("Only value columns of unique table could be updated")
        out[target.name.lower()] = eq.expression
    return out
