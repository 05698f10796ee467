"""Key merging by data model: fold rows with equal keys into one (Aggregate and Unique models).

Owns the aggregation semantics of seed 004 and DORIS-SEMANTICS, used twice with the same code:
when a memtable flushes (rows of one load) and when a tablet is read (merge-on-read across
rowsets). Input rows must already be sorted by key with a stable sort, so that within a key group
row order is load order (and, across rowsets concatenated in version order, version order).

    SUM                  sum of non-NULL values; NULL if all are NULL
    MAX / MIN            over non-NULL values; NULL if all are NULL
    REPLACE              the last row's value, even when it is NULL (UNIQUE values, too)
    REPLACE_IF_NOT_NULL  the last non-NULL value; NULL if all are NULL
    BITMAP_UNION         union of the BITMAPs, HLL_UNION of the HLLs (storage/objects.py)
    keys                 NULL equals NULL

Groups are found by comparing each row's keys with the previous row's (vectorised: packed key
codes, storage/key_codes.py, where the keys allow); REPLACE*
gather the last (non-NULL) row of each group with `take`; SUM/MAX/MIN of integer columns without
NULLs fold the runs with numpy's `reduceat`, other columns go through pyarrow's hash
aggregation on the group number. Integer SUMs wrap to the column type as Doris's C++ does;
a DECIMAL sum exceeding its precision is an error.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from storage import key_codes
from storage.arrays import contiguous
from storage.errors import StorageError
from storage.objects import OBJECT_AGGREGATIONS, union_column

_GROUP = "__group"


def group_starts(table: pa.Table, keys: list[str]) -> np.ndarray:
    """Row positions where a new key group starts (always includes 0 for a non-empty table):
    from packed key codes where the keys allow (storage/key_codes.py), else column by column."""
    n = table.num_rows
    if n == 0:
        return np.zeros(0, np.int64)
    starts = key_codes.group_starts(table, keys)
    if starts is not None:
        return starts
    same = np.ones(n - 1, dtype=bool)
    for name in keys:
        col = table.column(name)
        arr = contiguous(col)
        cur, prev = arr.slice(1), arr.slice(0, n - 1)
        equal = pc.fill_null(pc.equal(cur, prev), False).to_numpy(zero_copy_only=False)
        if arr.null_count:
            equal |= np.asarray(cur.is_null()) & np.asarray(prev.is_null())
        same &= equal
    return np.concatenate([[0], np.flatnonzero(~same) + 1]).astype(np.int64)


def merge_sorted(table: pa.Table, keys: list[str], aggregations: dict[str, str]) -> pa.Table:
    """Fold rows with equal keys; `aggregations` maps every non-key column to its aggregation."""
    n = table.num_rows
    starts = group_starts(table, keys)
    if len(starts) == n:
        return table
    ends = np.append(starts[1:], n)
    out = {name: table.column(name).take(pa.array(starts)) for name in keys}
    hashed = [c for c, agg in aggregations.items() if agg in ("SUM", "MAX", "MIN")]
    if hashed:
        out.update(_hash_aggregate(table, hashed, aggregations, starts, ends))
    for name, agg in aggregations.items():
        if agg == "REPLACE":
            out[name] = table.column(name).take(pa.array(ends - 1))
        elif agg == "REPLACE_IF_NOT_NULL":
            out[name] = _last_non_null(table.column(name), starts, ends)
        elif agg in OBJECT_AGGREGATIONS:  # BITMAP_UNION, HLL_UNION: storage/objects.py
            out[name] = union_column(table.column(name), starts, ends, agg)
        elif name not in out:
            raise StorageError(f"Column {name} has no aggregation to merge with")
    return pa.Table.from_arrays([out[c] for c in table.column_names], names=table.column_names)


def _last_non_null(col: pa.ChunkedArray, starts: np.ndarray, ends: np.ndarray) -> pa.Array:
    n = len(col)
    valid = np.asarray(col.is_valid()) if col.null_count else np.ones(n, dtype=bool)
    position = np.where(valid, np.arange(n), -1)
    last = np.maximum.reduceat(position, starts)
    indices = pa.array(last, mask=last < 0)
    return col.take(indices)


_REDUCE = {"SUM": np.add, "MAX": np.maximum, "MIN": np.minimum}


def _hash_aggregate(table: pa.Table, names: list[str], aggregations: dict[str, str],
                    starts: np.ndarray, ends: np.ndarray) -> dict[str, pa.Array]:
    out = {}
    rest = []
    for name in names:  # integers without NULLs: the groups are runs, numpy folds them
        col = table.column(name)
        if pa.types.is_integer(col.type) and col.null_count == 0:
            values = contiguous(col).to_numpy()
            # in the column's own type: a SUM wraps as the C++ one does (and as _cast_back)
            out[name] = pa.array(_REDUCE[aggregations[name]].reduceat(values, starts,
                                                                    dtype=values.dtype),
                                 col.type)
        else:
            rest.append(name)
    if rest:
        out.update(_acero_aggregate(table, rest, aggregations, starts, ends))
    return out


def _acero_aggregate(table: pa.Table, names: list[str], aggregations: dict[str, str],
                     starts: np.ndarray, ends: np.ndarray) -> dict[str, pa.Array]:
    group = np.repeat(np.arange(len(starts), dtype=np.int64), ends - starts)
    source = table.select(names).append_column(_GROUP, pa.array(group))
    options = pc.ScalarAggregateOptions(skip_nulls=True, min_count=1)
    specs = [(name, aggregations[name].lower(), options) for name in names]
    result = source.group_by(_GROUP, use_threads=False).aggregate(specs)
    order = result.column(_GROUP).to_numpy()
    if np.any(np.diff(order) < 0):
        result = result.take(pa.array(np.argsort(order, kind="stable")))
    out = {}
    for name in names:
        values = result.column(f"{name}_{aggregations[name].lower()}")
        out[name] = _cast_back(values, table.schema.field(name).type, name)
    return out


def _cast_back(values: pa.ChunkedArray, target: pa.DataType, name: str) -> pa.ChunkedArray:
    if values.type == target:
        return values
    wrap = pa.types.is_integer(target)
    try:
        return values.cast(target, safe=not wrap)
    except pa.ArrowInvalid as exc:
        raise StorageError(f"Arithmetic overflow aggregating column {name}: {exc}") from exc
