"""Filter: keep the rows where the condition is TRUE (NULL and FALSE drop the row)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from executor.expressions import evaluate


def run_filter(table: pa.Table, condition, eval_ctx) -> pa.Table:
    mask = evaluate(condition, table, eval_ctx)
    if not pa.types.is_boolean(mask.type):
        mask = pc.cast(mask, pa.bool_(), safe=False)
    return table.filter(mask, null_selection_behavior="drop")
