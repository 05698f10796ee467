"""Zone maps: min, max, has_null, has_not_null per data page and per segment (seed 003 §4).

Owns computing zone maps at write time, their serialized form, and page filtering (§4.2).

Zone map page body (page type ZONE_MAP_INDEX, one per column, all its pages' entries):

    u32 count | u32 0
    | count x u8 has_null | count x u8 has_not_null   (padded to 8)
    | u8 encoding | u8 has_nulls | u16 0 | u32 size | mins: `count` values of the column type,
                                                      encoded as a data page body (encoding.py),
                                                      NULL where a page holds no non-NULL value
                                                      (padded to 8)
    | u8 encoding | u8 has_nulls | u16 0 | u32 size | maxs, likewise

The segment zone map is the same structure with count 1, base64-encoded in the footer's column
meta (as Doris keeps `segment_zone_map` in the footer). Strings keep their full min/max.
An ARRAY, MAP, STRUCT or JSON column's entries keep has_null / has_not_null only (min and max
are NULL: no value filtering on them, as Doris keeps no zone map values for them).
A FLOAT/DOUBLE page holding a NaN gets min -inf and max +inf (pyarrow's min/max skip NaN; the
widened range keeps filtering conservative).

Filtering rules (seed 003 §4.2), a page is KEPT when:

    any operator other than IS [NOT] NULL, and has_null          (literal seed rule)
    x = v      min <= v <= max                x != v    not (min == v == max)  (*)
    x < v      min < v        x <= v   min <= v       x > v    max > v      x >= v   max >= v
    x IN (..)  some value v with min <= v <= max
    x IS NULL  has_null                       x IS NOT NULL  has_not_null

(*) The seed writes "v < min or v > max keeps the page" for `!=`; read as the only case that
keeps a page it would drop pages holding rows != v (min=1, max=10, v=5). minidoris keeps those
pages too and drops a page only when every value equals v, which is what Doris's
`ComparisonPredicateBase::evaluate_and` does.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from storage.predicate import PreparedPredicate, fixed_width_numpy
from storage.segment import encoding
from storage.types import DataType


@dataclass
class ZoneMaps:
    mins: pa.Array
    maxs: pa.Array
    has_null: np.ndarray      # bool, one per page
    has_not_null: np.ndarray  # bool

    def __len__(self) -> int:
        return len(self.has_null)

    def numbers(self) -> tuple[np.ndarray, np.ndarray] | None:
        """mins and maxs as numpy (`predicate.fixed_width_numpy`'s domain) when every entry has
        them and the type allows; computed once (readers keep their zone maps)."""
        memo = self.__dict__.get("_numbers", _UNSET)
        if memo is _UNSET:
            memo = None
            if not self.mins.null_count and not self.maxs.null_count:
                lo, hi = fixed_width_numpy(self.mins), fixed_width_numpy(self.maxs)
                if lo is not None and hi is not None:
                    memo = (lo, hi)
            self.__dict__["_numbers"] = memo
        return memo


_UNSET = object()


def compute(arr: pa.Array, starts: np.ndarray, ends: np.ndarray, dtype: DataType) -> ZoneMaps:
    """Zone maps of the pages [starts[i], ends[i]) of `arr`."""
    fast = _compute_numbers(arr, starts)
    if fast is not None:
        return fast
    mins, maxs, has_null, has_not_null = [], [], [], []
    if not dtype.has_zone_values:  # complex types / JSON: null counts only
        nulls = pa.nulls(len(starts), dtype.arrow())
        for start, end in zip(starts.tolist(), ends.tolist()):
            count = arr.slice(start, end - start).null_count
            has_null.append(count > 0)
            has_not_null.append(count < end - start)
        return ZoneMaps(nulls, nulls, np.array(has_null, dtype=bool),
                        np.array(has_not_null, dtype=bool))
    for start, end in zip(starts.tolist(), ends.tolist()):
        page = arr.slice(start, end - start)
        nulls = page.null_count
        has_null.append(nulls > 0)
        has_not_null.append(nulls < len(page))
        lo, hi = _min_max(page, dtype)
        mins.append(lo)
        maxs.append(hi)
    arrow_type = dtype.arrow()
    return ZoneMaps(pa.array(mins, type=arrow_type), pa.array(maxs, type=arrow_type),
                    np.array(has_null, dtype=bool), np.array(has_not_null, dtype=bool))


def _compute_numbers(arr: pa.Array, starts: np.ndarray) -> ZoneMaps | None:
    """`compute` of a column without NULLs whose values numpy can compare as they are stored
    (integers, DATE, DATETIME, DECIMAL of precision <= 18; not FLOAT/DOUBLE, whose NaN rule
    needs pyarrow): every page's min and max in one `reduceat` each, no kernel per page."""
    if arr.null_count or not len(arr):
        return None
    values = fixed_width_numpy(arr)
    if values is None or values.dtype.kind == "f":
        return None
    idx = starts.astype(np.intp)
    count = len(idx)
    return ZoneMaps(_from_numbers(np.minimum.reduceat(values, idx), arr.type),
                    _from_numbers(np.maximum.reduceat(values, idx), arr.type),
                    np.zeros(count, dtype=bool), np.ones(count, dtype=bool))


def _from_numbers(values: np.ndarray, arrow_type: pa.DataType) -> pa.Array:
    """An Arrow array of `arrow_type` from values in `fixed_width_numpy`'s domain."""
    if pa.types.is_decimal128(arrow_type):  # unscaled int64 -> 16-byte little-endian words
        words = np.empty((len(values), 2), dtype=np.int64)
        words[:, 0] = values
        words[:, 1] = values >> 63
        values = words
    return pa.Array.from_buffers(arrow_type, len(values),
                                 [None, pa.py_buffer(np.ascontiguousarray(values))])


def _min_max(page: pa.Array, dtype: DataType) -> tuple[pa.Scalar, pa.Scalar]:
    if dtype.is_float and pc.any(pc.is_nan(page)).as_py():
        inf = float("inf")
        return pa.scalar(-inf, dtype.arrow()), pa.scalar(inf, dtype.arrow())
    result = pc.min_max(page)
    return result["min"], result["max"]


def merge(zm: ZoneMaps, dtype: DataType) -> ZoneMaps:
    """One zone map covering all entries of `zm` (the segment zone map)."""
    if len(zm) == 1:
        return zm
    arrow_type = dtype.arrow()
    numbers = zm.numbers() if dtype.has_zone_values else None
    if not dtype.has_zone_values:
        lo = hi = pa.nulls(1, arrow_type)
    elif numbers is not None and numbers[0].dtype.kind != "f" and arrow_type == zm.mins.type:
        lo = _from_numbers(numbers[0].min(keepdims=True), arrow_type)
        hi = _from_numbers(numbers[1].max(keepdims=True), arrow_type)
    else:
        lo, hi = pa.array([pc.min(zm.mins)], arrow_type), pa.array([pc.max(zm.maxs)], arrow_type)
    return ZoneMaps(lo, hi,
                    np.array([zm.has_null.any()]), np.array([zm.has_not_null.any()]))


# -- serialization -------------------------------------------------------------------------------
def encode(zm: ZoneMaps, dtype: DataType) -> bytes:
    count = len(zm)
    flags = np.concatenate([zm.has_null, zm.has_not_null]).astype(np.uint8).tobytes()
    parts = [struct.pack("<II", count, 0), flags, bytes((-len(flags)) % 8)]
    for values in (zm.mins, zm.maxs):
        page = encoding.encode(values, dtype, allow_dict=False)
        body = page.body()
        parts += [struct.pack("<BBHI", page.encoding, page.has_nulls, 0, len(body)), body,
                  bytes((-len(body)) % 8)]
    return b"".join(parts)


def decode(body: pa.Buffer, dtype: DataType) -> ZoneMaps:
    count, _ = struct.unpack_from("<II", body)
    flags = np.frombuffer(body, np.uint8, 2 * count, 8).astype(bool)
    pos = 8 + 2 * count + (-(2 * count)) % 8
    arrays = []
    for _ in range(2):
        enc, has_nulls, _, size = struct.unpack_from("<BBHI", body, pos)
        pos += 8
        if pos + size > body.size:
            raise ValueError("zone map values run past the page")
        arrays.append(encoding.decode(enc, bool(has_nulls), body.slice(pos, size), count, dtype))
        pos += size + (-size) % 8
    return ZoneMaps(arrays[0], arrays[1], flags[:count].copy(), flags[count:].copy())


# -- filtering -----------------------------------------------------------------------------------
def keep(zm: ZoneMaps, pred: PreparedPredicate) -> np.ndarray:
    """Which entries (pages) may hold rows satisfying `pred`, per the rules above."""
    if pred.op == "is_null":
        return zm.has_null.copy()
    if pred.op == "is_not_null":
        return zm.has_not_null.copy()
    if pred.never_true:
        return np.zeros(len(zm), dtype=bool)
    return zm.has_null | _value_condition(zm, pred)


def always_true(zm: ZoneMaps, pred: PreparedPredicate) -> bool:
    """Every entry holds only non-NULL values that satisfy `pred` (the segment zone map: the
    predicate need not be evaluated on its rows). Decided for comparisons in numpy only."""
    if zm.has_null.any():
        return False
    if pred.op == "is_not_null":
        return True
    v = pred.number
    numbers = zm.numbers()
    if v is None or numbers is None or pred.value_set is not None:
        return False
    mins, maxs = numbers
    op = pred.op
    if op == "=":
        return bool(((mins == v) & (maxs == v)).all())
    if op == "!=":
        return bool(((maxs < v) | (mins > v)).all())
    check = _ALWAYS[op]
    return bool((check(mins, v) & check(maxs, v)).all())


_ALWAYS = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal}


def _value_condition(zm: ZoneMaps, pred: PreparedPredicate) -> np.ndarray:
    numbers = zm.numbers()
    if numbers is not None:
        found = _numeric_condition(numbers, pred)
        if found is not None:
            return found
    return _arrow_condition(zm, pred)


def _numeric_condition(numbers: tuple[np.ndarray, np.ndarray],
                       pred: PreparedPredicate) -> np.ndarray | None:
    """The rules above on numpy mins/maxs (no NULL entries), or None if `pred` does not run
    in numpy."""
    mins, maxs = numbers
    vs = pred.value_set
    if vs is not None:  # any integer set, however small (a runtime filter's few keys)
        t = vs.array.type
        if not pa.types.is_integer(t) or t == pa.uint64() or mins.dtype.kind not in "iu":
            return None
        return _holds_a_value(vs.numpy, mins, maxs)
    v = pred.number
    if v is None:
        return None
    op = pred.op
    if op == "=":
        return (mins <= v) & (maxs >= v)
    if op == "!=":
        return ~((mins == v) & (maxs == v))
    if op == "<":
        return mins < v
    if op == "<=":
        return mins <= v
    if op == ">":
        return maxs > v
    return maxs >= v


def _arrow_condition(zm: ZoneMaps, pred: PreparedPredicate) -> np.ndarray:
    def cmp(op: str, values: pa.Array, scalar: pa.Scalar) -> np.ndarray:
        # NULL min/max (pages without values) compare as "keep"
        return np.asarray(pc.fill_null(pred.compare(op, values, scalar), True))

    def contains(scalar: pa.Scalar) -> np.ndarray:
        return cmp("<=", zm.mins, scalar) & cmp(">=", zm.maxs, scalar)

    op = pred.op
    if op == "=":
        found = _strings_contain(zm, pred)
        return found if found is not None else contains(pred.scalars[0])
    if pred.value_set is not None:
        return _in_sorted(zm, pred.value_set.array, pred.value_set.numpy)
    if op == "in":  # values not of the column type: compare one by one in a common type
        out = np.zeros(len(zm), dtype=bool)
        for scalar in pred.scalars:
            out |= contains(scalar)
        return out
    if op == "!=":
        v = pred.scalars[0]
        all_equal = np.asarray(pc.fill_null(pc.and_(pred.compare("=", zm.mins, v),
                                                    pred.compare("=", zm.maxs, v)), False))
        return ~all_equal
    if op in ("<", "<="):
        return cmp(op, zm.mins, pred.scalars[0])
    return cmp(op, zm.maxs, pred.scalars[0])


def _strings_contain(zm: ZoneMaps, pred: PreparedPredicate) -> np.ndarray | None:
    """`=` on a string column's zone maps, compared as numpy object arrays of Python strings
    (Python's string order is UTF-8 byte order, as the kernels compare), kept on the zone maps
    after the first use: no kernel calls per segment. NULL min/max keep the entry. None when
    this does not apply."""
    values = pred.key_values
    if not values or not isinstance(values[0], str) or not pa.types.is_string(zm.mins.type):
        return None
    memo = zm.__dict__.get("_strings")
    if memo is None:
        lo, hi = zm.mins.to_pylist(), zm.maxs.to_pylist()
        unknown = np.array([a is None or b is None for a, b in zip(lo, hi)], dtype=bool)
        lo_arr = np.array(["" if a is None else a for a in lo] or [""], dtype=object)[:len(lo)]
        hi_arr = np.array(["" if b is None else b for b in hi] or [""], dtype=object)[:len(hi)]
        memo = zm.__dict__["_strings"] = (lo_arr, hi_arr, unknown)
    lo_arr, hi_arr, unknown = memo
    v = values[0]
    if len(unknown) == 1:  # a segment zone map: one comparison, no array operations
        return np.array([bool(unknown[0]) or lo_arr[0] <= v <= hi_arr[0]])
    # compared as a Python str in a 0-d object array: a bare str operand becomes a numpy
    # str_, which drops trailing NULs ('\x00' would compare as '')
    boxed = np.empty((), dtype=object)
    boxed[()] = v
    return unknown | ((lo_arr <= boxed) & (hi_arr >= boxed))


def _in_sorted(zm: ZoneMaps, value_set: pa.Array, values: np.ndarray) -> np.ndarray:
    """Entries whose [min, max] holds one of the sorted distinct `values` (of the column type):
    the first value >= min must be <= max. One searchsorted instead of a pass per value."""
    valid = np.asarray(pc.and_(pc.is_valid(zm.mins), pc.is_valid(zm.maxs)))
    out = ~valid  # NULL min/max (pages without values): keep
    if len(values) == 0 or not valid.any():
        return out
    fill = value_set[0] if zm.mins.null_count or zm.maxs.null_count else None
    hit = _holds_a_value(values, _numpy(zm.mins, fill), _numpy(zm.maxs, fill))
    return out | (hit & valid)


def _holds_a_value(values: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Which [lo, hi] hold one of the sorted `values`: the first value >= lo is <= hi."""
    idx = np.searchsorted(values, lo, side="left")
    inside = idx < len(values)
    hit = np.zeros(len(lo), dtype=bool)
    hit[inside] = values[idx[inside]] <= hi[inside]
    return hit


def _numpy(arr: pa.Array, fill: pa.Scalar | None) -> np.ndarray:
    if fill is not None:
        arr = pc.fill_null(arr, fill)
    return arr.to_numpy(zero_copy_only=False)
