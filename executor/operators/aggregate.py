"""Hash aggregation with pyarrow's grouped aggregate kernels.

SUM widens as Doris does: integers to BIGINT (LARGEINT stays LARGEINT), DECIMAL(p,s) to
DECIMAL(38,s), FLOAT to DOUBLE; never sum in the column's own narrow type. AVG of integers is a
DOUBLE. A global aggregate (no keys) over no rows gives one row: count 0, others NULL.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc


def _widen(arr: pa.ChunkedArray, func: str) -> pa.ChunkedArray:
    t = arr.type
    if func == "sum":
        if pa.types.is_integer(t) or pa.types.is_boolean(t):
            return arr.cast(pa.int64())
        if pa.types.is_decimal(t):
            return arr.cast(pa.decimal128(38, t.scale))
        if pa.types.is_floating(t):
            return arr.cast(pa.float64())
    if func == "mean" and (pa.types.is_integer(t) or pa.types.is_boolean(t) or pa.types.is_floating(t)):
        return arr.cast(pa.float64())
    if func == "mean" and pa.types.is_decimal(t):
        # Doris: AVG(DECIMAL(p,s)) keeps a decimal with at least 4 fractional digits.
        return arr.cast(pa.decimal128(38, max(t.scale, 4)))
    return arr


def run_aggregate(table: pa.Table, group_names: list[str], calls: list) -> pa.Table:
    columns = {n: table.column(n) for n in group_names}
    specs = []
    out_names = list(group_names)
    for i, call in enumerate(calls):
        if call.func == "count_all":
            specs.append(([], "count_all"))
        else:
            tmp = f"__in{i}"
            columns[tmp] = _widen(table.column(call.arg), call.func)
            opts = pc.CountOptions(mode="only_valid") if call.func in ("count", "count_distinct") else None
            specs.append((tmp, call.func, opts) if opts else (tmp, call.func))
        out_names.append(call.output)
    source = pa.table(columns) if columns else pa.table({"__rows": pa.nulls(table.num_rows, pa.bool_())})
    result = source.group_by(group_names, use_threads=False).aggregate(specs)
    produced = [s[1] if s[0] == [] else f"{s[0]}_{s[1]}" for s in specs]
    arrays = [result.column(n) for n in group_names] + [result.column(n) for n in produced]
    return pa.Table.from_arrays(arrays, names=out_names)
