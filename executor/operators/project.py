"""Project: compute each output expression into a named column."""

from __future__ import annotations

import pyarrow as pa
from sqlglot import exp

from executor.expressions import evaluate


def run_project(table: pa.Table, exprs: list, names: list[str], eval_ctx) -> pa.Table:
    if not exprs:
        # No columns but still rows (count(*) projects nothing): keep the row count.
        return pa.table({"__rows": pa.nulls(table.num_rows, pa.bool_())})
    arrays = []
    for e in exprs:
        if isinstance(e, exp.Column) and e.name in table.column_names:
            arrays.append(table.column(e.name))  # pass-through: no copy
        else:
            arrays.append(evaluate(e, table, eval_ctx))
    return pa.Table.from_arrays(arrays, names=names)
