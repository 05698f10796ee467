"""ARRAY functions (Doris 2.1's array functions), vectorised over list arrays.

Each function takes its list arguments apart with `list_layout.parts` (offsets, flat values,
valid rows), computes on the flat values with Arrow / numpy kernels keyed by each value's row
(`parent_rows`) and position, and builds the result list array or column. No Python loop runs
per row. Constant arguments are evaluated once (scalars) and broadcast; an all-constant call
gives a scalar (`vectors.on_arrays`).

NULL rules (regression suite query_p0/sql_functions/array_functions/
test_array_functions_by_literal): a NULL array gives NULL; array_contains / array_position with
a NULL needle give NULL; `arr[i]` and element_at are 1-based, a negative index counts from the
end, 0 or out of range is NULL; array_sort puts NULLs first, array_reverse_sort last;
array_distinct keeps one NULL; array_min/max/sum/avg/product skip NULL elements and give NULL
for an array without any; array_compact drops consecutive duplicates (Doris's meaning);
array_range / sequence(start, end[, step]) end is exclusive, a step <= 0 gives NULL.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from executor.expressions import casts, strings
from executor.expressions.context import Frame, Value
from executor.expressions.errors import ExpressionError
from executor.expressions.list_layout import (build, is_list, keep_values, nonnull, parent_rows,
                                              parts, positions)
from executor.expressions.vectors import on_arrays


def _args(node: exp.Expression) -> list[exp.Expression]:
    if isinstance(node, exp.Anonymous):
        return list(node.expressions)
    out = [node.this] if node.args.get("this") is not None else []
    for key in ("expression", "expressions", "start", "end", "null"):
        v = node.args.get(key)
        if isinstance(v, list):
            out += v
        elif v is not None:
            out.append(v)
    return out


def _need_list(v: Value, name: str) -> None:
    if not is_list(v.type) and not pa.types.is_null(v.type):
        raise ExpressionError(f"{name} requires an ARRAY argument, got {v.type}")


def _as_list(v: pa.Array) -> pa.Array:
    return pa.nulls(len(v), pa.list_(pa.null())) if pa.types.is_null(v.type) else v


def _call(frame: Frame, node: exp.Expression, name: str, fn: Callable[..., pa.Array],
          lists: int = 1, min_args: int = 1, max_args: int = 1) -> Value:
    args = _args(node)
    if not min_args <= len(args) <= max_args:
        raise ExpressionError(f"Can not found function '{name}' which has {len(args)} arity.")
    values = [frame.eval(a) for a in args]
    for v in values[:lists]:
        _need_list(v, name)
    return on_arrays(lambda *xs: fn(*[_as_list(x) if i < lists else x
                                      for i, x in enumerate(xs)]), *values, n=frame.n)


# -- constructors ----------------------------------------------------------------------------------
def eval_array(node: exp.Array, frame: Frame) -> Value:
    """`[a, b, c]` / `array(a, b, c)`: elements coerced to their common type."""
    values = [frame.eval(e) for e in node.expressions]
    if not values:
        return pa.scalar([], pa.list_(pa.null()))
    common = casts.union_type(values)
    values = casts.coerce(values, common)
    return on_arrays(lambda *cols: _stack(cols, common), *values, n=frame.n)


def _stack(cols: tuple[pa.Array, ...], value_type: pa.DataType) -> pa.Array:
    n, k = len(cols[0]), len(cols)
    flat = pa.concat_arrays([c.cast(value_type) for c in cols])
    order = np.arange(n * k, dtype=np.int64).reshape(k, n).T.reshape(-1)
    return build(np.arange(0, n * k + 1, k, dtype=np.int64), flat.take(pa.array(order)))


def _array_with_constant(n_arr: pa.Array, value: pa.Array) -> pa.Array:
    counts = np.asarray(pc.fill_null(n_arr.cast(pa.int64()), 0).to_numpy(zero_copy_only=False))
    counts = np.maximum(counts, 0)
    offsets = np.concatenate([[0], np.cumsum(counts)])
    flat = value.take(pa.array(parent_rows(offsets)))
    return build(offsets, flat, nonnull(n_arr))


_RANGE_MAX_ELEMENTS = 10_000_000  # a statement's ranges together (a runaway step would OOM)


def array_range(*args: pa.Array) -> pa.Array:
    """array_range / sequence: [start, end) by step (1 by default); of DATE / DATETIME values
    by one day (Doris's ArrayRangeDayUnit), the result of their type."""
    temporal = pa.types.is_date32(args[0].type) or pa.types.is_timestamp(args[0].type)
    if temporal and len(args) >= 2:
        kind = args[0].type
        if pa.types.is_date32(kind):
            day, as_int = 1, lambda a: a.cast(pa.int32()).cast(pa.int64())
        else:
            day, as_int = 86_400_000_000, lambda a: a.cast(pa.timestamp("us")).cast(pa.int64())
        out = array_range(as_int(args[0]), as_int(args[1].cast(kind)),
                          pa.array(np.full(len(args[0]), day, dtype=np.int64)))
        offsets, values, valid = parts(out)
        values = values.cast(pa.int64())
        typed = values.cast(pa.int32()).cast(kind) if pa.types.is_date32(kind) else \
            values.cast(pa.timestamp("us")).cast(kind)
        return build(offsets, typed, valid)
    nums = [np.asarray(pc.fill_null(a.cast(pa.int64()), 0).to_numpy(zero_copy_only=False))
            for a in args]
    valid = np.logical_and.reduce([nonnull(a) for a in args])
    if len(args) == 1:
        start, end, step = np.zeros_like(nums[0]), nums[0], np.ones_like(nums[0])
    else:
        start, end = nums[0], nums[1]
        step = nums[2] if len(args) == 3 else np.ones_like(start)
    valid &= step > 0
    safe = np.where(step > 0, step, 1)
    counts = np.where(valid, np.maximum(0, -((start - end) // safe)), 0)
    if int(counts.sum()) > _RANGE_MAX_ELEMENTS:
        raise ExpressionError(f"array_range: more than {_RANGE_MAX_ELEMENTS} elements")
    offsets = np.concatenate([[0], np.cumsum(counts)])
    rows = parent_rows(offsets)
    flat = start[rows] + positions(offsets) * safe[rows]
    return build(offsets, pa.array(flat.astype(np.int32) if _fits_int32(flat) else flat), valid)


def _fits_int32(a: np.ndarray) -> bool:
    return a.size == 0 or (a.min() >= -(2**31) and a.max() < 2**31)


# -- element access ------------------------------------------------------------------------------
def _element_at(arr: pa.Array, index: pa.Array) -> pa.Array:
    offsets, values, valid = parts(arr)
    lengths = np.diff(offsets)
    idx = np.asarray(pc.fill_null(index.cast(pa.int64()), 0).to_numpy(zero_copy_only=False))
    pos = np.where(idx > 0, idx - 1, lengths + idx)
    ok = valid & nonnull(index) & (idx != 0) & (pos >= 0) & (pos < lengths)
    where = np.where(ok, offsets[:-1] + pos, 0)
    if len(values) == 0:
        return pa.nulls(len(arr), values.type)
    taken = values.take(pa.array(where))
    return pc.if_else(pa.array(ok), taken, pa.scalar(None, values.type))


def _slice(arr: pa.Array, offset: pa.Array, length: pa.Array | None = None) -> pa.Array:
    offsets, values, valid = parts(arr)
    lengths = np.diff(offsets)
    off = np.asarray(pc.fill_null(offset.cast(pa.int64()), 0).to_numpy(zero_copy_only=False))
    start = np.where(off > 0, off - 1, lengths + off)
    empty = (off == 0) | (start < 0)
    end = lengths.copy()
    if length is not None:
        ln = np.asarray(pc.fill_null(length.cast(pa.int64()), 0).to_numpy(zero_copy_only=False))
        end = np.where(ln >= 0, np.minimum(start + ln, lengths), lengths + ln)
        valid = valid & nonnull(length)
    end = np.where(empty, start, end)
    rows, pos = parent_rows(offsets), positions(offsets)
    keep = (pos >= start[rows]) & (pos < end[rows])
    return keep_values(offsets, values, keep, valid & nonnull(offset))


def eval_bracket(node: exp.Bracket, frame: Frame) -> Value:
    return bracket_of(frame.eval(node.this), node, frame)


def bracket_of(arr: Value, node: exp.Bracket, frame: Frame) -> Value:
    """`arr[i]` (element_at) and `arr[a:b]` (array_slice with an end position) of the
    evaluated `arr` (maps.py looks at the value first)."""
    _need_list(arr, "element_at")
    key = node.expressions[0]
    if isinstance(key, exp.Slice):
        lo = frame.eval(key.this) if key.this is not None else pa.scalar(1, pa.int64())
        if key.expression is None:
            return on_arrays(lambda a, o: _slice(_as_list(a), o), arr, lo, n=frame.n)
        hi = frame.eval(key.expression)
        return on_arrays(lambda a, o, e: _slice_to(_as_list(a), o, e), arr, lo, hi, n=frame.n)
    index = frame.eval(key)
    return on_arrays(lambda a, i: _element_at(_as_list(a), i), arr, index, n=frame.n)


def _slice_to(arr: pa.Array, lo: pa.Array, hi: pa.Array) -> pa.Array:
    """`arr[lo:hi]`: positions lo..hi inclusive, each 1-based or negative from the end."""
    lengths = np.diff(parts(arr)[0])
    h = np.asarray(pc.fill_null(hi.cast(pa.int64()), 0).to_numpy(zero_copy_only=False))
    lo_n = np.asarray(pc.fill_null(lo.cast(pa.int64()), 0).to_numpy(zero_copy_only=False))
    start = np.where(lo_n > 0, lo_n - 1, lengths + lo_n)
    stop = np.where(h > 0, h, lengths + h + 1)
    return _slice(arr, lo, pa.array(np.maximum(stop - start, 0)))


# -- sizes and searches ----------------------------------------------------------------------------
def _size(arr: pa.Array) -> pa.Array:
    offsets, _, valid = parts(arr)
    return pa.array(np.diff(offsets), pa.int64(), mask=~valid)


def _matches(arr: pa.Array, needle: pa.Array) -> tuple[np.ndarray, pa.Array, np.ndarray]:
    """(offsets, equality of each flat value with its row's needle, valid rows)."""
    offsets, values, valid = parts(arr)
    rows = parent_rows(offsets)
    if pa.types.is_null(values.type):
        hit = np.zeros(len(values), dtype=bool)
    else:
        target = casts.comparison_type(values, needle)
        per_value = needle.take(pa.array(rows))
        eq = pc.equal(casts.cast_value(values, target), casts.cast_value(per_value, target))
        hit = np.asarray(pc.fill_null(eq, False).to_numpy(zero_copy_only=False), dtype=bool)
    return offsets, hit, valid & nonnull(needle)


def _contains(arr: pa.Array, needle: pa.Array) -> pa.Array:
    offsets, hit, valid = _matches(arr, needle)
    counts = np.bincount(parent_rows(offsets), weights=hit, minlength=len(arr))
    return pa.array(counts > 0, pa.bool_(), mask=~valid)


def _position(arr: pa.Array, needle: pa.Array) -> pa.Array:
    offsets, hit, valid = _matches(arr, needle)
    out = np.zeros(len(arr), dtype=np.int64)
    idx = np.flatnonzero(hit)
    rows, first = np.unique(parent_rows(offsets)[idx], return_index=True)
    out[rows] = positions(offsets)[idx[first]] + 1
    return pa.array(out, pa.int64(), mask=~valid)


def _remove(arr: pa.Array, needle: pa.Array) -> pa.Array:
    offsets, hit, valid = _matches(arr, needle)
    return keep_values(offsets, parts(arr)[1], ~hit, valid & nonnull(needle))


# -- set-like functions: (row, value) keys, NULL equal to NULL ------------------------------------
def _keyed(arr: pa.Array, tag: int = 0) -> tuple[pa.Table, np.ndarray, pa.Array, np.ndarray]:
    offsets, values, valid = parts(arr)
    present = nonnull(values)
    filled = values if values.null_count == 0 or pa.types.is_null(values.type) else \
        pc.fill_null(values, _zero(values.type))
    table = pa.table({"row": pa.array(parent_rows(offsets)), "isnull": pa.array(~present),
                      "v": filled if not pa.types.is_null(values.type) else
                      pa.nulls(len(values), pa.int8()).fill_null(0),
                      "pos": pa.array(positions(offsets) + (tag << 40))})
    return table, offsets, values, valid


def _zero(t: pa.DataType) -> pa.Scalar:
    """A value standing in for NULL in grouping keys (the `isnull` key tells them apart)."""
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return pa.scalar("", t)
    if pa.types.is_date(t):
        return pa.scalar(0, pa.int32()).cast(t)
    return pa.scalar(0, pa.int64()).cast(t)


def _from_keyed(table: pa.Table, n: int, valid: np.ndarray, value_type: pa.DataType) -> pa.Array:
    """Rows of (row, isnull, v, pos), sorted by (row, pos), back into a list array."""
    table = table.sort_by([("row", "ascending"), ("pos", "ascending")])
    rows = np.asarray(table.column("row").to_numpy(), dtype=np.int64)
    counts = np.bincount(rows, minlength=n) if len(rows) else np.zeros(n, np.int64)
    offsets = np.concatenate([[0], np.cumsum(counts)])
    v = table.column("v").combine_chunks() if table.num_rows else pa.array([], value_type)
    isnull = table.column("isnull").combine_chunks() if table.num_rows else pa.array([], pa.bool_())
    v = pc.if_else(isnull, pa.scalar(None, v.type), v) if len(v) else v
    if pa.types.is_null(value_type):
        v = pa.nulls(len(v))
    return build(offsets, v.cast(value_type) if v.type != value_type else v, valid)


def _distinct_keyed(table: pa.Table) -> pa.Table:
    return table.group_by(["row", "isnull", "v"], use_threads=False) \
        .aggregate([("pos", "min")]).rename_columns(["row", "isnull", "v", "pos"])


def _distinct(arr: pa.Array) -> pa.Array:
    table, _, values, valid = _keyed(arr)
    return _from_keyed(_distinct_keyed(table), len(arr), valid, values.type)


def _common_lists(lists: tuple[pa.Array, ...]) -> list[pa.Array]:
    """The list arguments cast to one element type."""
    flats = [parts(a)[1] for a in lists]
    common = casts.union_type([f for f in flats if not pa.types.is_null(f.type)] or flats)
    if pa.types.is_null(common):
        return list(lists)
    return [a if a.type.value_type == common else casts.cast_value(a, pa.list_(common))
            for a in lists]


def _stacked(lists: tuple[pa.Array, ...]) -> tuple[pa.Table, np.ndarray, pa.DataType]:
    """Every list argument's elements keyed by row, one table (in argument order), with the
    rows where all arguments are valid and the common element type."""
    tables, valid, vtype = [], np.ones(len(lists[0]), dtype=bool), None
    for i, a in enumerate(_common_lists(lists)):
        t, _, values, ok = _keyed(a, i)
        tables.append(t)
        valid &= ok
        vtype = values.type if vtype is None or pa.types.is_null(vtype) else vtype
    return _concat_tables(tables), valid, vtype


def _union(*lists: pa.Array) -> pa.Array:
    table, valid, vtype = _stacked(lists)
    return _from_keyed(_distinct_keyed(table), len(lists[0]), valid, vtype)


def _concat_tables(tables: list[pa.Table]) -> pa.Table:
    schema = next((t.schema for t in tables if not pa.types.is_null(t.schema.field("v").type)),
                  tables[0].schema)
    return pa.concat_tables([t.cast(schema) for t in tables])


def _intersect(*lists: pa.Array) -> pa.Array:
    lists_ = _common_lists(lists)
    first, _, values, valid = _keyed(lists_[0])
    result = _distinct_keyed(first)
    for other in lists_[1:]:
        t, _, _, ok = _keyed(other)
        valid &= ok
        keys = _distinct_keyed(t).select(["row", "isnull", "v"]).cast(
            result.select(["row", "isnull", "v"]).schema)
        result = result.join(keys, ["row", "isnull", "v"], join_type="left semi")
    return _from_keyed(result, len(lists[0]), valid, values.type)


def _except(a: pa.Array, b: pa.Array) -> pa.Array:
    a, b = _common_lists((a, b))
    left, _, values, valid = _keyed(a)
    right, _, _, ok = _keyed(b)
    keys = right.select(["row", "isnull", "v"]).cast(left.select(["row", "isnull", "v"]).schema)
    kept = _distinct_keyed(left).join(keys, ["row", "isnull", "v"], join_type="left anti")
    return _from_keyed(kept, len(a), valid & ok, values.type)


def _overlap(a: pa.Array, b: pa.Array) -> pa.Array:
    a, b = _common_lists((a, b))
    left, _, _, valid = _keyed(a)
    right, _, _, ok = _keyed(b)
    left = left.filter(pc.invert(left.column("isnull")))
    right = right.filter(pc.invert(right.column("isnull"))).select(["row", "v"]).cast(
        left.select(["row", "v"]).schema)
    hit = left.join(right, ["row", "v"], join_type="left semi").column("row").to_numpy()
    out = np.zeros(len(a), dtype=bool)
    out[np.asarray(hit, dtype=np.int64)] = True
    return pa.array(out, mask=~(valid & ok))


def _concat(*lists: pa.Array) -> pa.Array:
    table, valid, vtype = _stacked(lists)
    return _from_keyed(table, len(lists[0]), valid, vtype)


# -- ordering ----------------------------------------------------------------------------------
def _sort(arr: pa.Array, descending: bool = False) -> pa.Array:
    offsets, values, valid = parts(arr)
    table = pa.table({"row": pa.array(parent_rows(offsets)), "v": values})
    order = pc.sort_indices(table, sort_keys=[
        ("row", "ascending", "at_end"),
        ("v", "descending", "at_end") if descending else ("v", "ascending", "at_start")])
    return build(offsets, values.take(order), valid)


def _reverse(arr: pa.Array) -> pa.Array:
    offsets, values, valid = parts(arr)
    rows, pos = parent_rows(offsets), positions(offsets)
    index = offsets[rows] + (np.diff(offsets)[rows] - 1 - pos)
    return build(offsets, values.take(pa.array(index)), valid)


def _compact(arr: pa.Array) -> pa.Array:
    """Consecutive equal elements (NULLs equal) kept once."""
    offsets, values, valid = parts(arr)
    n = len(values)
    if n == 0:
        return arr
    first = np.zeros(n, dtype=bool)
    first[offsets[:-1][np.diff(offsets) > 0]] = True
    prev_null = ~nonnull(values[:-1]) if n > 1 else np.zeros(0, bool)
    cur_null = ~nonnull(values[1:]) if n > 1 else np.zeros(0, bool)
    same = np.zeros(n, dtype=bool)
    if n > 1:
        eq = np.asarray(pc.fill_null(pc.equal(values[1:], values[:-1]), False)
                        .to_numpy(zero_copy_only=False), dtype=bool)
        same[1:] = eq | (prev_null & cur_null)
    return keep_values(offsets, values, first | ~same, valid)


def _pop(arr: pa.Array, front: bool) -> pa.Array:
    offsets, values, valid = parts(arr)
    pos, lengths = positions(offsets), np.diff(offsets)[parent_rows(offsets)]
    keep = pos > 0 if front else pos < lengths - 1
    return keep_values(offsets, values, keep, valid)


def _push(arr: pa.Array, value: pa.Array, front: bool) -> pa.Array:
    item = _stack((value,), value.type)
    return _concat(item, arr) if front else _concat(arr, item)


# -- aggregates over each array --------------------------------------------------------------------
def _reduce(arr: pa.Array, how: str) -> pa.Array:
    offsets, values, valid = parts(arr)
    n = len(arr)
    if pa.types.is_null(values.type) or len(values) == 0:
        return pa.nulls(n, pa.int64() if how != "mean" else pa.float64())
    if how in ("mean", "product") and not pa.types.is_decimal(values.type):
        values = values.cast(pa.float64())
    elif how == "sum" and pa.types.is_integer(values.type):
        values = values.cast(pa.int64())
    elif how == "sum" and pa.types.is_decimal(values.type):
        values = values.cast(pa.decimal128(38, values.type.scale))
    table = pa.table({"row": pa.array(parent_rows(offsets)), "v": values})
    grouped = table.group_by("row", use_threads=False).aggregate([("v", how)])
    rows = np.asarray(grouped.column("row").to_numpy(), dtype=np.int64)
    result = grouped.column(f"v_{how}").combine_chunks()
    index = np.full(n, len(result), dtype=np.int64)
    index[rows] = np.arange(len(rows))
    padded = pa.concat_arrays([result, pa.nulls(1, result.type)])
    out = padded.take(pa.array(index))
    return out if valid.all() else pc.if_else(pa.array(valid), out, pa.scalar(None, out.type))


def _join(arr: pa.Array, sep: pa.Array, null_text: pa.Array | None = None) -> pa.Array:
    """array_join(arr, sep[, null_replace]): NULL elements skipped unless replaced."""
    offsets, values, valid = parts(arr)
    text = casts.cast_value(values, pa.string()) if not pa.types.is_null(values.type) else \
        pa.nulls(len(values), pa.string())
    rows = parent_rows(offsets)
    if null_text is not None:
        text = pc.coalesce(text, null_text.take(pa.array(rows)))
    keep = nonnull(text)
    lists = keep_values(offsets, text, keep, valid)
    return pc.binary_join(lists, sep.cast(pa.string()))


# -- dispatch ------------------------------------------------------------------------------------
def _fn(name: str, impl: Callable[..., pa.Array], lists: int = 1, lo: int = 1, hi: int = 1):
    return lambda node, frame: _call(frame, node, name, impl, lists, lo, hi)


def eval_reverse(node: exp.Reverse, frame: Frame) -> Value:
    value = frame.eval(node.this)
    if is_list(value.type):
        return on_arrays(_reverse, value, n=frame.n)
    return strings.eval_reverse(node, frame)


_EQUALITY_NAMES = ("array_contains", "array_position", "array_remove")

HANDLERS = {
    exp.Array: eval_array, exp.Bracket: eval_bracket, exp.Reverse: eval_reverse,
    exp.ArraySize: _fn("array_size", _size),
    exp.ArrayContains: _fn("array_contains", _contains, 1, 2, 2),
    exp.ArrayPosition: _fn("array_position", _position, 1, 2, 2),
    exp.ArrayToString: _fn("array_join", _join, 1, 2, 3),
    exp.ArrayDistinct: _fn("array_distinct", _distinct),
    exp.ArraySort: _fn("array_sort", _sort),
    exp.ArrayMin: _fn("array_min", lambda a: _reduce(a, "min")),
    exp.ArrayMax: _fn("array_max", lambda a: _reduce(a, "max")),
    exp.ArraySum: _fn("array_sum", lambda a: _reduce(a, "sum")),
    exp.ArraySlice: _fn("array_slice", _slice, 1, 2, 3),
    exp.ArrayConcat: _fn("array_concat", _concat, 99, 1, 99),
    exp.ArrayIntersect: _fn("array_intersect", _intersect, 99, 2, 99),
    exp.ArrayExcept: _fn("array_except", _except, 2, 2, 2),
    exp.ArrayRemove: _fn("array_remove", _remove, 1, 2, 2),
    exp.ArrayCompact: _fn("array_compact", _compact),
}

FUNCTIONS = {
    "ARRAY": lambda node, frame: eval_array(exp.Array(expressions=node.expressions), frame),
    "ELEMENT_AT": _fn("element_at", _element_at, 1, 2, 2),
    "SIZE": _fn("size", _size), "CARDINALITY": _fn("cardinality", _size),
    "ARRAY_SIZE": _fn("array_size", _size),
    "ARRAYS_OVERLAP": _fn("arrays_overlap", _overlap, 2, 2, 2),
    "ARRAY_REVERSE_SORT": _fn("array_reverse_sort", lambda a: _sort(a, True)),
    "ARRAY_AVG": _fn("array_avg", lambda a: _reduce(a, "mean")),
    "ARRAY_PRODUCT": _fn("array_product", lambda a: _reduce(a, "product")),
    "ARRAY_UNION": _fn("array_union", _union, 99, 2, 99),
    "ARRAY_WITH_CONSTANT": _fn("array_with_constant", _array_with_constant, 0, 2, 2),
    "ARRAY_REPEAT": _fn("array_repeat", lambda v, k: _array_with_constant(k, v), 0, 2, 2),
    "ARRAY_RANGE": _fn("array_range", array_range, 0, 1, 3),
    "SEQUENCE": _fn("sequence", array_range, 0, 1, 3),
    "ARRAY_POPBACK": _fn("array_popback", lambda a: _pop(a, False)),
    "ARRAY_POPFRONT": _fn("array_popfront", lambda a: _pop(a, True)),
    "ARRAY_PUSHBACK": _fn("array_pushback", lambda a, v: _push(a, v, False), 1, 2, 2),
    "ARRAY_PUSHFRONT": _fn("array_pushfront", lambda a, v: _push(a, v, True), 1, 2, 2),
    "ARRAY_CONCAT": _fn("array_concat", _concat, 99, 1, 99),
    "ARRAY_SLICE": _fn("array_slice", _slice, 1, 2, 3),
    "ARRAY_JOIN": _fn("array_join", _join, 1, 2, 3),
    "ARRAY_MIN": _fn("array_min", lambda a: _reduce(a, "min")),
    "ARRAY_MAX": _fn("array_max", lambda a: _reduce(a, "max")),
    "ARRAY_SUM": _fn("array_sum", lambda a: _reduce(a, "sum")),
    "ARRAY_DISTINCT": _fn("array_distinct", _distinct),
    "ARRAY_SORT": _fn("array_sort", _sort),
    "ARRAY_COMPACT": _fn("array_compact", _compact),
    "ARRAY_INTERSECT": _fn("array_intersect", _intersect, 99, 2, 99),
    "ARRAY_EXCEPT": _fn("array_except", _except, 2, 2, 2),
}
