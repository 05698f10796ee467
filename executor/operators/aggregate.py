"""Hash aggregation with pyarrow's grouped aggregate kernels, plus GROUPING SETS.

SUM widens as Doris does: integers to BIGINT (LARGEINT stays LARGEINT), DECIMAL(p,s) to
DECIMAL(38,s), FLOAT to DOUBLE; never sum in the column's own narrow type. AVG of integers is a
DOUBLE. A global aggregate (no keys) over no rows gives one row: count 0, others NULL.

Calls pyarrow has no kernel for are finished from a list-valued kernel, vectorised:
SUM/AVG(DISTINCT) from `distinct` lists, GROUP_CONCAT from `list` (or `distinct`) lists, and
COUNT(DISTINCT a, b) counts distinct length-prefixed concatenations of the arguments. GROUPING
SETS run one aggregation per set and concatenate them, with NULL for the keys a set does not
group by and GROUPING_ID computed per set.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from executor.expressions import decimal_int64
from executor.operators.sort import sort_indices

_KERNEL = {"sum_distinct": "distinct", "mean_distinct": "distinct", "group_concat": "list"}


def _widen(arr: pa.ChunkedArray, func: str) -> pa.ChunkedArray:
    t = arr.type
    base = func.replace("_distinct", "")
    if base == "sum":
        if pa.types.is_integer(t) or pa.types.is_boolean(t):
            return arr.cast(pa.int64())
        if pa.types.is_decimal(t):
            target = pa.decimal128(38, t.scale)
            same_bytes = decimal_int64.retyped(arr, target)
            return same_bytes if same_bytes is not None else arr.cast(target)
        if pa.types.is_floating(t):
            return arr.cast(pa.float64())
    if base in ("mean", "stddev", "stddev_samp", "variance", "variance_samp") and (
            pa.types.is_integer(t) or pa.types.is_boolean(t) or pa.types.is_floating(t)):
        return arr.cast(pa.float64())
    if base == "mean" and pa.types.is_decimal(t):
        # Doris: AVG(DECIMAL(p,s)) keeps a decimal with at least 4 fractional digits.
        target = pa.decimal128(38, max(t.scale, 4))
        rescaled = decimal_int64.retyped(arr, target)
        return rescaled if rescaled is not None else arr.cast(target)
    return arr


def _multi_key(table: pa.Table, names: list[str]) -> pa.ChunkedArray:
    """One string per row that is equal iff all arguments are (NULL if any argument is)."""
    parts = []
    for n in names:
        text = pc.cast(table.column(n), pa.string())
        parts += [pc.cast(pc.utf8_length(text), pa.string()), pa.scalar(":"), text]
    return pc.binary_join_element_wise(*parts, "")


def _aggregate_once(table: pa.Table, group_names: list[str], calls: list) -> pa.Table:
    source = table
    if any(c.func == "group_concat" and c.order for c in calls):
        # Lists keep input order: sort by the (first) ORDER BY of group_concat beforehand.
        first = next(c for c in calls if c.func == "group_concat" and c.order)
        source = table.take(sort_indices(table, first.order))
    columns = {n: source.column(n) for n in group_names}
    specs, produced = [], []
    for i, call in enumerate(calls):
        if call.func == "grouping_id":
            continue
        if call.func == "count_all":
            specs.append(([], "count_all"))
            produced.append("count_all")
            continue
        tmp = f"__in{i}"
        if call.func == "count_distinct_multi":
            columns[tmp] = _multi_key(source, call.args)
            func = "count_distinct"
        else:
            columns[tmp] = _widen(source.column(call.arg), call.func)
            func = _KERNEL.get(call.func, call.func)
            if call.func == "group_concat":
                columns[tmp] = pc.cast(columns[tmp], pa.string())
                func = "distinct" if call.distinct else "list"
        opts = pc.CountOptions(mode="only_valid") if func in ("count", "count_distinct") else None
        if func in ("stddev", "variance"):
            opts = pc.VarianceOptions(ddof=0)
        elif func in ("stddev_samp", "variance_samp"):
            func = func.replace("_samp", "")
            opts = pc.VarianceOptions(ddof=1)
        specs.append((tmp, func, opts) if opts else (tmp, func))
        produced.append(f"{tmp}_{func}")
    if not specs:
        specs.append(([], "count_all"))  # keeps the row count (and one row for no keys)
    src = pa.table(columns) if columns else pa.table({"__rows": pa.nulls(source.num_rows, pa.bool_())})
    keys = group_names
    if not keys and any(spec[1] in ("distinct", "list") for spec in specs):
        # "distinct" and "list" exist only as hash kernels: group by one constant key.
        keys = ["__all"]
        src = src.append_column("__all", pa.repeat(pa.scalar(0, pa.int8()), src.num_rows))
    result = src.group_by(keys, use_threads=False).aggregate(specs)
    if keys is not group_names and result.num_rows == 0:
        result = _empty_input_row(result)
    out = {n: result.column(n) for n in group_names}
    it = iter(produced)
    for call in calls:
        if call.func == "grouping_id":
            continue
        out[call.output] = _finish(result.column(next(it)), call)
    if not out:
        out["__rows"] = pa.nulls(result.num_rows, pa.bool_())  # rows without columns
    return pa.table(out)


def _empty_input_row(result: pa.Table) -> pa.Table:
    """Aggregating no rows without keys still yields one row (empty lists, zero counts)."""
    cols = {}
    for f in result.schema:
        if pa.types.is_list(f.type) or pa.types.is_large_list(f.type):
            cols[f.name] = pa.array([[]], f.type)
        elif f.name == "count_all" or f.name.endswith(("_count", "_count_distinct")):
            cols[f.name] = pa.array([0], f.type)
        else:
            cols[f.name] = pa.nulls(1, f.type)
    return pa.table(cols)


def _finish(col: pa.ChunkedArray, call) -> pa.Array | pa.ChunkedArray:
    if call.func not in ("sum_distinct", "mean_distinct", "group_concat"):
        return col
    lists = col.combine_chunks()
    n = len(lists)
    flat = pc.list_flatten(lists)
    parents = pc.list_parent_indices(lists)
    keep = pc.is_valid(flat)
    flat, parents = flat.filter(keep), np.asarray(parents.filter(keep).to_numpy(), dtype=np.int64)
    counts = np.bincount(parents, minlength=n)
    if call.func == "group_concat":
        offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int32)
        joined = pc.binary_join(pa.ListArray.from_arrays(pa.array(offsets), flat), call.separator)
        return pc.if_else(pa.array(counts > 0), joined, pa.nulls(n, pa.string()))
    sums = pa.table({"p": pa.array(parents), "v": flat}).group_by("p").aggregate(
        [("v", "sum" if call.func == "sum_distinct" else "mean")])
    if sums.num_rows == 0:
        return pa.nulls(n, sums.schema.field(1).type)
    position = np.full(n, -1, dtype=np.int64)
    position[np.asarray(sums.column("p").to_numpy())] = np.arange(sums.num_rows)
    values = sums.column(1).combine_chunks().take(pa.array(np.where(position >= 0, position, 0)))
    return pc.if_else(pa.array(position >= 0), values, pa.nulls(n, values.type))


def run_aggregate(table: pa.Table, group_names: list[str], calls: list,
                  grouping_sets: list[list[str]] | None = None) -> pa.Table:
    order = group_names + [c.output for c in calls]
    if grouping_sets is None:
        return _aggregate_once(table, group_names, calls).select(order)
    parts = []
    for keys in grouping_sets:
        part = _aggregate_once(table, keys, calls)
        for name in group_names:
            if name not in keys:
                part = part.append_column(name, pa.nulls(part.num_rows, table.schema.field(name).type))
        for call in calls:
            if call.func == "grouping_id":
                gid = 0
                for k in call.args:
                    gid = gid * 2 + (0 if k in keys else 1)
                part = part.append_column(call.output, pa.array([gid] * part.num_rows, pa.int64()))
        parts.append(part.select(order))
    return pa.concat_tables(parts)
