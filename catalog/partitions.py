"""Partition keys: typed range/list bounds, overlap checks, and routing rows to partitions.

A range bound is stored as a list of strings, one per partition column; a shorter list is padded
with MINVALUE (Doris pads `LESS THAN ("10")` on two columns to ("10", MIN)), and a `None` element
means MAXVALUE. `[lower, upper)` compares column by column, as tuples. A NULL partition value is
the minimum. Routing is vectorised: one pass of Arrow comparisons per partition (partitions are
few; rows are many), never a loop over rows.
"""

from __future__ import annotations

import functools

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from catalog.errors import CodedDdlError, DataQualityError, DdlError
from catalog.model import OlapTable, Partition
from catalog.values import format_value, parse_value
from storage.types import DataType

MAX = None


def _key(types: list[DataType], bound: list) -> tuple:
    """A bound as a comparable tuple: (rank, value) per column; MIN pads, None is MAX."""
    out = []
    for i, t in enumerate(types):
        if i >= len(bound):
            out.append((0, 0))
        elif bound[i] is MAX:
            out.append((2, 0))
        else:
            out.append((1, parse_value(t, bound[i])))
    return tuple(out)


def compare_bounds(types: list[DataType], a: list, b: list) -> int:
    ka, kb = _key(types, a), _key(types, b)
    return (ka > kb) - (ka < kb)


def format_range(types: list[DataType], lower: list, upper: list) -> str:
    """Doris's Range text: [types: [DATE]; keys: [2017-01-01]; ..types: [DATE]; keys: [...]; )"""
    def one(bound: list) -> str:
        keys = []
        for i, t in enumerate(types):
            if i >= len(bound):
                keys.append(_min_text(t))
            elif bound[i] is MAX:
                keys.append(_max_text(t))
            else:
                keys.append(format_value(t, parse_value(t, bound[i])))
        names = ", ".join(t.sql().split("(")[0].upper() for t in types)
        return f"types: [{names}]; keys: [{', '.join(keys)}]; "
    return f"[{one(lower)}..{one(upper)})"


def format_list(types: list[DataType], values: list[list]) -> str:
    """Doris's Range text of a LIST partition: its keys, [types: [INT]; keys: [1]; , ...]"""
    names = ", ".join(t.sql().split("(")[0].upper() for t in types)
    keys = [", ".join("NULL" if v is None else format_value(t, parse_value(t, v))
                      for t, v in zip(types, tup)) for tup in values]
    return "[" + ", ".join(f"types: [{names}]; keys: [{k}]; " for k in keys) + "]"


def partitions_in_order(table: OlapTable) -> list[Partition]:
    """RANGE partitions by range (MIN first), others by id: the order Doris shows them in."""
    parts = table.sorted_partitions()
    if table.partition_info.kind != "RANGE":
        return parts
    types = partition_types(table)
    return sorted(parts, key=lambda p: _key(types, p.lower or []))


def _min_text(t: DataType) -> str:
    return {"DATE": "0000-01-01", "DATETIME": "0000-01-01 00:00:00", "TINYINT": "-128",
            "SMALLINT": "-32768", "INT": "-2147483648", "BIGINT": "-9223372036854775808",
            "LARGEINT": "-170141183460469231731687303715884105728"}.get(t.kind, "")


def _max_text(t: DataType) -> str:
    return {"DATE": "9999-12-31", "DATETIME": "9999-12-31 23:59:59", "TINYINT": "127",
            "SMALLINT": "32767", "INT": "2147483647", "BIGINT": "9223372036854775807",
            "LARGEINT": "170141183460469231731687303715884105727"}.get(t.kind, "MAXVALUE")


def partition_types(table: OlapTable) -> list[DataType]:
    return [table.column(c).type for c in table.partition_info.columns]


def check_range(types: list[DataType], name: str, lower: list, upper: list,
                existing: list[Partition]) -> None:
    """Reject an empty range or one that intersects an existing partition (Doris's messages)."""
    if compare_bounds(types, lower, upper) >= 0:
        raise DdlError(f"Invalid range value format: partition {name}: lower bound "
                       f"{format_range(types, lower, upper)} is not less than upper bound")
    for p in existing:
        if compare_bounds(types, lower, p.upper) < 0 and compare_bounds(types, p.lower, upper) < 0:
            raise DdlError(f"Range {format_range(types, lower, upper)} is intersected with range: "
                           f"{format_range(types, p.lower, p.upper)}")


def check_list_values(types: list[DataType], values: list[list], existing: list[Partition]) -> None:
    """Reject a LIST partition whose value tuples meet an existing partition's (Doris's text;
    values compare typed, so "0" and "-0" conflict on an INT column)."""
    def typed(tup: list) -> tuple:
        return tuple(None if v is None else parse_value(t, v) for t, v in zip(types, tup))

    item = "(" + ",".join("(" + ",".join(f"'{v}'" for v in tup) + ")" if len(tup) > 1
                          else f"'{tup[0]}'" for tup in values) + ")"
    for p in existing:
        if p.values is None:
            continue
        theirs = {typed(tup) for tup in p.values}
        for tup in values:
            if typed(tup) in theirs:
                key = _key_sql(types, tup)
                current = "(" + ",".join(_key_sql(types, t) for t in p.values) + ")"
                raise DdlError(f"The partition key[{key}] in partition item[{item}] is conflict "
                               f"with current partitionKeys[{current}]")


def _key_sql(types: list[DataType], tup: list) -> str:
    return "(" + ", ".join("NULL" if v is None else f'"{format_value(t, parse_value(t, v))}"'
                           for t, v in zip(types, tup)) + ")"


def validate_bound(types: list[DataType], bound: list, name: str) -> list:
    if len(bound) > len(types):
        raise DdlError(f"partition key desc list size[{len(bound)}] is not equal to partition "
                       f"column size[{len(types)}]")
    # A trailing minimum ("0000-01-01", "-2147483648": what SHOW CREATE TABLE prints for a
    # range starting at MIN) is the MIN padding itself; year 0 does not parse as a date.
    end = len(bound)
    while end and bound[end - 1] is not MAX and _is_min_text(types[end - 1], bound[end - 1]):
        end -= 1
    bound = bound[:end]
    for t, v in zip(types, bound):
        if v is not MAX:
            parse_value(t, v)
    return bound


def _is_min_text(t: DataType, v: str) -> bool:
    text = str(v).strip()
    return text == _min_text(t) or t.kind == "DATETIME" and text == "0000-01-01"


# -- routing ----------------------------------------------------------------------------------
def _scalar(t: DataType, text: str) -> pa.Scalar:
    return pa.scalar(parse_value(t, text), type=t.arrow())


def _ge_bound(cols: list[pa.Array], types: list[DataType], bound: list) -> pa.Array:
    """Vectorised `row >= bound` as tuples; NULL is the minimum."""
    n = len(cols[0])
    result = pa.array([True] * n, pa.bool_()) if not bound else None
    for i in range(len(bound) - 1, -1, -1):
        if bound[i] is MAX:
            here_gt, here_eq = pa.nulls(n, pa.bool_()).fill_null(False), pa.nulls(n, pa.bool_()).fill_null(False)
        else:
            v = _scalar(types[i], bound[i])
            here_gt = pc.fill_null(pc.greater(cols[i], v), False)
            here_eq = pc.fill_null(pc.equal(cols[i], v), False)
        tail = result if result is not None else pa.array([True] * n, pa.bool_())
        result = pc.or_(here_gt, pc.and_(here_eq, tail))
    return result


def _as_int64(arr: pa.Array) -> np.ndarray | None:
    """Integers, dates and datetimes as comparable int64 values (None for other types)."""
    t = arr.type
    if pa.types.is_date32(t):
        arr = arr.cast(pa.int32())
    elif pa.types.is_timestamp(t):
        arr = arr.cast(pa.int64())
    elif not pa.types.is_integer(t) or t == pa.uint64():
        return None
    return np.asarray(arr.to_numpy(zero_copy_only=False), dtype=np.int64)


_BOUNDS: dict[tuple, tuple[int, int]] = {}  # (type, lower, upper) texts -> int64 bounds
_BOUNDS_MAX = 1 << 16


def _range_bounds(parts: list[Partition], dtype: DataType) -> tuple[np.ndarray, np.ndarray]:
    """The partitions' [lower, upper) bounds as int64 arrays, each bound's text parsed once per
    process (a load into a table of hundreds of daily partitions used to parse them all)."""
    lows, highs = np.empty(len(parts), np.int64), np.empty(len(parts), np.int64)
    for i, p in enumerate(parts):
        key = (dtype, tuple(p.lower or ()), tuple(p.upper or ()))
        bounds = _BOUNDS.get(key)
        if bounds is None:
            low = _as_int64(pa.array([_scalar(dtype, p.lower[0])])) if p.lower else None
            high = _as_int64(pa.array([_scalar(dtype, p.upper[0])])) \
                if p.upper and p.upper[0] is not MAX else None
            bounds = (np.iinfo(np.int64).min if low is None else int(low[0]),
                      np.iinfo(np.int64).max if high is None else int(high[0]))
            if len(_BOUNDS) >= _BOUNDS_MAX:
                _BOUNDS.clear()
            _BOUNDS[key] = bounds
        lows[i], highs[i] = bounds
    return lows, highs


def _single_column_range(parts: list[Partition], col: pa.Array,
                         dtype: DataType) -> pa.Array | None:
    """The range lookup as one binary search when the partition column is one integer, date
    or datetime column without NULLs; None to take the general way."""
    values = _as_int64(col) if not col.null_count else None
    if values is None or not len(values):
        return None
    lows, highs = _range_bounds(parts, dtype)
    if values.max() == np.iinfo(np.int64).max:
        return None
    if np.any(np.diff(highs) <= 0):
        return None  # not sorted by upper bound: the general way
    idx = np.searchsorted(highs, values, side="right")
    inside = idx < len(parts)
    idx = np.minimum(idx, len(parts) - 1)
    inside &= values >= lows[idx]
    return pa.array(idx.astype(np.int32), mask=~inside)


def route_rows(table: OlapTable, data: pa.Table, parts: list[Partition] | None = None) -> pa.Array:
    """For each row, the index into `parts` (default `table.sorted_partitions()`) it belongs to.

    Raises DataQualityError (the whole load fails) if any row fits no partition.
    """
    target = partition_index(table, data, parts)
    if target.null_count:
        raise no_partition_error(table, data, pc.index(pc.is_null(target), True).as_py())
    return target


def no_partition_error(table: OlapTable, data: pa.Table, row: int) -> DataQualityError:
    """The strict load's failure for a row that fits no (selected) partition."""
    values = ", ".join(str(data.column(c)[row].as_py()) for c in table.partition_info.columns)
    return DataQualityError(
        "Insert has filtered data in strict mode. First error: no partition for this tuple. "
        f"tuple=({values})")


def partition_index(table: OlapTable, data: pa.Table,
                    parts: list[Partition] | None = None) -> pa.Array:
    """For each row, the index into `parts` (default `table.sorted_partitions()`) it belongs
    to, NULL for none."""
    parts = table.sorted_partitions() if parts is None else parts
    info = table.partition_info
    n = data.num_rows
    if info.kind == "UNPARTITIONED":
        return pa.array(np.zeros(n, dtype=np.int32))
    if not parts:
        raise CodedDdlError(
            "data cannot be inserted into table with empty partition. Use `SHOW PARTITIONS FROM "
            f"{table.name}` to see the currently partitions of this table. ", 5083)
    cols = [data.column(c).combine_chunks() for c in info.columns]
    types = partition_types(table)
    if info.kind == "RANGE" and len(cols) == 1:
        found = _single_column_range(parts, cols[0], types[0])
        if found is not None:
            return found
    target = pa.nulls(n, pa.int32())
    for idx, p in enumerate(parts):
        if info.kind == "RANGE":
            inside = pc.and_(_ge_bound(cols, types, p.lower),
                             pc.invert(_ge_bound(cols, types, p.upper)))
        else:
            inside = _in_list(cols, types, p.values or [])
        target = pc.if_else(pc.and_(inside, pc.is_null(target)), pa.scalar(idx, pa.int32()), target)
    return target


def _in_list(cols: list[pa.Array], types: list[DataType], values: list[list]) -> pa.Array:
    n = len(cols[0])
    if not values:
        return pa.array([False] * n)
    terms = []
    for tup in values:
        eqs = []
        for c, t, v in zip(cols, types, tup):
            eqs.append(pc.is_null(c) if v is None else pc.fill_null(pc.equal(c, _scalar(t, v)), False))
        terms.append(functools.reduce(pc.and_, eqs))
    return functools.reduce(pc.or_, terms)
