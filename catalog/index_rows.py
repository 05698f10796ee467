"""The rows one materialized index stores, made from the base table's rows.

A rollup stores a subset of the base columns (its tablet's memtable picks them, sorts and
aggregates them by the rollup's own keys). A synchronous materialized view may also store
columns the base lacks, computed from base columns (`MaterializedIndexMeta.define_exprs`):

    ["count", col]    mv_count_<col> BIGINT SUM: 1 where <col> is not NULL, else 0
                      (COUNT(col) is the SUM of it)
    ["expr", sql]     an arithmetic expression (+ - * over columns and numbers, in Doris SQL
                      over base column names) summed / min'ed / max'ed: SUM(a * b)

`index_rows` adds those columns to a batch of base rows (vectorised, pyarrow compute), after
keeping only the rows a materialized view's WHERE selects (`where_clause`, evaluated by the
executor's expression engine; NULL is not selected); every load path and the ADD ROLLUP job
call it once per index.
"""

from __future__ import annotations

import functools

import pyarrow as pa
import pyarrow.compute as pc
import sqlglot
from sqlglot import exp

from catalog.model import UNIQUE_KEYS, MaterializedIndexMeta, OlapTable

_ARITHMETIC = {exp.Add: "add_checked", exp.Sub: "subtract_checked", exp.Mul: "multiply_checked"}
ALLOWED = (exp.Add, exp.Sub, exp.Mul, exp.Paren, exp.Neg, exp.Column, exp.Literal)


def define_sources(define: list[str]) -> list[str]:
    """The base columns a computed column reads."""
    if define[0] == "count":
        return [define[1]]
    return list(dict.fromkeys(c.name for c in _parsed(define[1])
                              .find_all(exp.Column)))


def source_columns(table: OlapTable, index: MaterializedIndexMeta) -> list[str]:
    """The base columns the index's rows are made of."""
    out: list[str] = []
    hidden = [c.name for c in table.hidden_columns] if index.keys_type == UNIQUE_KEYS else []
    if index.schema is not None:  # a schema change's shadow index: what its origin has of it
        origin = table.indexes[int(index.properties["origin_index_id"])]
        return [n for n in origin.columns if n in index.columns] + hidden
    for name in index.columns:
        srcs = define_sources(index.define_exprs[name]) if name in index.define_exprs else [name]
        out += [table.column(s).name for s in srcs if table.column(s).name not in out]
    if index.where_clause:
        out += [table.column(c.name).name for c in _where(index).find_all(exp.Column)
                if table.column(c.name).name not in out]
    return out + hidden


def where_columns(index: MaterializedIndexMeta) -> list[str]:
    """The base columns a materialized view's WHERE reads."""
    if not index.where_clause:
        return []
    return list(dict.fromkeys(c.name for c in _where(index).find_all(exp.Column)))


def _where(index: MaterializedIndexMeta) -> exp.Expression:
    return _parsed(index.where_clause)


@functools.lru_cache(maxsize=1024)
def _parsed(sql: str) -> exp.Expression:
    """A view's WHERE or computed column, parsed once (loads use them for every tablet's
    chunk of every batch); callers only read the tree."""
    return sqlglot.parse_one(sql, read="doris")


def selected_rows(index: MaterializedIndexMeta, rows: pa.Table) -> pa.Table:
    """The rows a materialized view's WHERE selects (all rows without one)."""
    if not index.where_clause or rows.num_rows == 0:
        return rows
    from executor.expressions import EvalContext, evaluate_predicate  # the executor's engine

    keep = evaluate_predicate(_where(index), rows, EvalContext())
    return rows.filter(pc.fill_null(keep, False))


def index_rows(table: OlapTable, index: MaterializedIndexMeta, rows: pa.Table) -> pa.Table:
    """`rows` (base columns) with the index's computed columns added."""
    if index.schema is not None:
        return _shadow_rows(table, index, rows)
    rows = selected_rows(index, rows)
    for name, define in index.define_exprs.items():
        if define[0] == "count":
            arr = pc.cast(pc.is_valid(rows.column(define[1])), pa.int64())
        else:
            arr = evaluate(_parsed(define[1]), rows)
            arr = arr if isinstance(arr, (pa.Array, pa.ChunkedArray)) else \
                pa.array([arr.as_py()] * rows.num_rows, pa.int64())
            if not pa.types.is_floating(arr.type):
                arr = pc.cast(arr, pa.int64())
        rows = rows.append_column(name, arr)
    return rows


def evaluate(e: exp.Expression, rows: pa.Table):
    """An arithmetic expression over `rows`, integers widened to int64 first."""
    if isinstance(e, exp.Paren):
        return evaluate(e.this, rows)
    if isinstance(e, exp.Column):
        arr = rows.column(e.name)
        return pc.cast(arr, pa.int64()) if pa.types.is_integer(arr.type) else arr
    if isinstance(e, exp.Literal):
        return pa.scalar(int(e.this) if e.this.lstrip("-").isdigit() else float(e.this))
    if isinstance(e, exp.Neg):
        return pc.negate_checked(evaluate(e.this, rows))
    return getattr(pc, _ARITHMETIC[type(e)])(evaluate(e.this, rows), evaluate(e.expression, rows))


def _shadow_rows(table: OlapTable, index: MaterializedIndexMeta, rows: pa.Table) -> pa.Table:
    """Rows of the current schema as a heavy schema change's new index stores them: each column
    cast to its new type, a new column filled with its DEFAULT (or NULL)."""
    from storage.column_mapping import default_array

    schema = table.tablet_schema(index.index_id)
    arrays = {}
    for col in schema.columns:
        if col.name in rows.column_names:
            arrays[col.name] = pc.cast(rows.column(col.name), col.type.arrow())
        else:
            arrays[col.name] = default_array(col, rows.num_rows)
    return pa.table(arrays)
