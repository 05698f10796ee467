"""Project: compute each output expression into a named column.

The expressions are evaluated together (`evaluate_many`), so a sub-expression they share is
computed once per batch."""

from __future__ import annotations

import pyarrow as pa
from sqlglot import exp

from executor.expressions import evaluate_many
from executor.expressions.vectors import to_array
from executor.operators.aggregate import AggInput


def run_project(table: pa.Table, exprs: list, names: list[str], eval_ctx) -> pa.Table:
    if not exprs:
        # No columns but still rows (count(*) projects nothing): keep the row count.
        return pa.table({"__rows": pa.nulls(table.num_rows, pa.bool_())})
    computed = [e for e in exprs if not _passes_through(e, table)]
    values = iter(evaluate_many(computed, table, eval_ctx))
    arrays = [table.column(e.name) if _passes_through(e, table) else next(values) for e in exprs]
    return pa.Table.from_arrays(arrays, names=names)


def _passes_through(e, table: pa.Table) -> bool:
    return isinstance(e, exp.Column) and e.name in table.column_names  # no copy


def project_for_aggregate(table: pa.Table, exprs: list, names: list[str], eval_ctx) -> AggInput:
    """`run_project` for an aggregate's arguments: DECIMALs computed in int64 stay so, and so
    do DECIMAL columns of at most 18 digits (read once however many arguments use them)."""
    values = evaluate_many(exprs, table, eval_ctx, raw=True)
    return AggInput({name: to_array(v, table.num_rows) if isinstance(v, pa.Scalar) else v
                     for name, v in zip(names, values)}, table.num_rows)
