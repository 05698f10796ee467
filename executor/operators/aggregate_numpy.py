"""Grouped COUNT / SUM / AVG / MIN / MAX in numpy, when the keys pack into a small or sorted code.

Acero's hash aggregation costs ~50 ns per row and aggregate once there are many groups (TPC-H
Q17 groups 6M lineitem rows by 200k part keys); numpy's `bincount` / `ufunc.at` over dense
group ids, or `ufunc.reduceat` over runs of a sorted key, cost a few ns. Two groupings:

- `_Direct`: the packed key code (`group_keys.KeyCodes.packed`) is itself the group id when its
  radix is at most a few times the row count: per-slot results, then the slots that occur, in
  the order of their first row (the order Acero gives, first appearance);
- `_Runs`: the code never decreases (a tablet's rows in key order, as lineitem by l_orderkey,
  or an Aggregate tablet's merged rows grouped by its leading key): one group per run,
  `reduceat` at the run starts. Taken before `_Direct` whenever the code is sorted: a run
  boundary pass costs a fifth of `_Direct`'s bincount and first-row search (180k rows in 10
  groups: ~0.1 against ~0.5 ms).

`aggregate` returns None when a call or an argument type is not covered here (DISTINCT, lists,
variances, strings' MIN/MAX, ...), whichever the grouping; the caller then runs Acero. Results
are typed and valued as the Acero path gives them (see aggregate.py): sums of int64 exact
modulo 2^64 as Arrow's, float sums added row by row in input order as Arrow's hash_sum does,
DECIMAL sums exact (two 32-bit halves when int64 could overflow).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from executor.expressions import decimal_int64
from executor.expressions.decimal_int64 import Unscaled
from executor.operators.group_keys import integer_view
from storage.arrays import contiguous

_FLOAT_EXACT = 2**53


class _Direct:
    """Group id = packed code in [0, radix); `slots`: the codes present, by first row."""

    def __init__(self, code: np.ndarray, radix: int):
        self.code, self.radix = code, radix
        counts = np.bincount(code, minlength=radix)
        self.slots = _by_first_row(code, radix, np.count_nonzero(counts))
        self.counts = counts[self.slots]
        self.keys = self.slots

    def sum_int(self, values: np.ndarray, bound: int) -> np.ndarray:
        out = np.zeros(self.radix, np.int64)
        np.add.at(out, self.code, values)
        return out[self.slots]

    def sum_float(self, values: np.ndarray) -> np.ndarray | None:
        return np.bincount(self.code, weights=values, minlength=self.radix)[self.slots]

    def count(self, valid: np.ndarray) -> np.ndarray:
        return np.bincount(self.code[valid], minlength=self.radix)[self.slots]

    def extreme(self, values: np.ndarray, valid: np.ndarray | None, maximum: bool) -> np.ndarray:
        fill = np.iinfo(np.int64).min if maximum else np.iinfo(np.int64).max
        out = np.full(self.radix, fill, np.int64)
        code = self.code
        if valid is not None:
            code, values = code[valid], values[valid]
        (np.maximum if maximum else np.minimum).at(out, code, values)
        return out[self.slots]


def _by_first_row(code: np.ndarray, radix: int, groups: int) -> np.ndarray:
    """The codes present, in the order of their first row. Few groups: growing prefixes until
    all were seen, then a sort of their first rows; many: the rows that are their code's first
    row, in row order."""
    n = len(code)
    first = np.full(radix, n, np.int64)
    if groups > 1 << 12:
        np.minimum.at(first, code, np.arange(n))
        return code[first[code] == np.arange(n)]
    start, size = 0, 1 << 16
    while start < n:
        end = min(n, start + size)
        np.minimum.at(first, code[start:end], np.arange(start, end))
        if np.count_nonzero(first < n) == groups:
            break
        start, size = end, size * 4
    present = np.flatnonzero(first < n)
    return present[np.argsort(first[present], kind="stable")]


class _Runs:
    """One group per run of equal codes (the code never decreases)."""

    def __init__(self, code: np.ndarray):
        n = len(code)
        change = np.empty(n, bool)
        change[:1] = True
        np.not_equal(code[1:], code[:-1], out=change[1:])
        self.starts = np.flatnonzero(change)
        self.counts = np.diff(np.append(self.starts, n))
        self.keys = code[self.starts]

    def sum_int(self, values: np.ndarray, bound: int) -> np.ndarray:
        return np.add.reduceat(values, self.starts) if len(values) else values

    def sum_float(self, values: np.ndarray) -> np.ndarray:
        # reduceat would add floats pairwise; bincount adds each group's rows in row order, as
        # Acero's hash_sum does.
        k = len(self.starts)
        return np.bincount(np.repeat(np.arange(k), self.counts), weights=values, minlength=k)

    def count(self, valid: np.ndarray) -> np.ndarray:
        return np.add.reduceat(valid.astype(np.int64), self.starts) if len(valid) else \
            np.zeros(0, np.int64)

    def extreme(self, values: np.ndarray, valid: np.ndarray | None, maximum: bool) -> np.ndarray:
        if not len(values):
            return values
        if valid is not None:
            fill = np.iinfo(np.int64).min if maximum else np.iinfo(np.int64).max
            values = np.where(valid, values, fill)
        return (np.maximum if maximum else np.minimum).reduceat(values, self.starts)


def groups_of(code: np.ndarray, radix: int):
    """The grouping for a packed key code, or None (Acero then hashes it)."""
    n = len(code)
    if n and _sorted(code):
        return _Runs(code)
    if radix <= max(4 * n, 1 << 16):
        return _Direct(code, radix)
    return None


def runs_of_sorted_key(col) -> tuple[_Runs, pa.Array] | None:
    """(its runs, the key of each run) for a lone integer, DATE or DATETIME grouping key
    without NULLs whose values never decrease (an Aggregate tablet's merged rows grouped by
    their leading key), else None: the runs are taken on the values themselves, without
    packing a key code (its min, max and subtraction: three passes over the rows)."""
    arr = col if isinstance(col, (pa.Array, pa.ChunkedArray)) else None
    if arr is None or arr.null_count:
        return None
    t = arr.type
    if pa.types.is_boolean(t):
        return None
    found = integer_view(contiguous(arr))
    if found is None or not len(found[0]) or not _sorted(found[0]):
        return None
    runs = _Runs(found[0])
    keys = pa.array(runs.keys)
    return runs, keys if keys.type == t else keys.view(t)


_PROBES = 64


def _sorted(code: np.ndarray) -> bool:
    """True when the code never decreases: a few adjacent pairs first (unsorted codes fail
    there almost always), then all of them."""
    n = len(code)
    if n > 4 * _PROBES:
        at = np.linspace(0, n - 2, _PROBES).astype(np.int64)
        if bool(np.any(code[at + 1] < code[at])):
            return False
    return bool(np.all(code[1:] >= code[:-1]))


# -- calls ---------------------------------------------------------------------------------------
def _numbers(arg):
    """(int64 values with NULL slots 0, validity or None, the type, bound) for an integer-like
    argument (DECIMAL in int64, integers, DATE, DATETIME), else None."""
    if isinstance(arg, Unscaled):
        return arg.values, arg.valid, arg.type, arg.bound
    arg = contiguous(arg)
    t = arg.type
    if pa.types.is_decimal128(t):
        u = decimal_int64.operand(arg)
        return None if u is None else (u.values, u.valid, t, u.bound)
    found = integer_view(arg)
    if found is None:
        return None
    values = found[0].astype(np.int64, copy=False)  # read only below
    bound = max(abs(int(values.max())), abs(int(values.min()))) if len(values) else 0
    return values, found[1], t, bound


def _floats(arg) -> tuple[np.ndarray, np.ndarray | None] | None:
    if isinstance(arg, Unscaled) or not pa.types.is_floating(arg.type):
        return None
    arg = contiguous(arg)
    values = np.asarray(arg.cast(pa.float64(), safe=False).fill_null(0.0))
    return values, (np.asarray(pc.is_valid(arg)) if arg.null_count else None)


def _counts(groups, valid: np.ndarray | None) -> np.ndarray:
    return groups.counts if valid is None else groups.count(valid)


def _with_nulls(values: np.ndarray, present: np.ndarray, t: pa.DataType) -> pa.Array:
    mask = None if present.all() else ~present
    if pa.types.is_decimal128(t):
        return decimal_int64.from_unscaled(np.where(present, values, 0), None if mask is None
                                           else present, t)
    if pa.types.is_date32(t) or pa.types.is_timestamp(t):
        storage = pa.int32() if pa.types.is_date32(t) else pa.int64()
        return pa.array(values.astype(storage.to_pandas_dtype()), storage, mask=mask).view(t)
    return pa.array(values.astype(t.to_pandas_dtype()), t, mask=mask)


def _exact_sums(groups, values: np.ndarray, bound: int):
    """Exact per-group sums of int64 values: int64, or Python ints where they may not fit."""
    if bound * len(values) < 2**63:
        return groups.sum_int(values, bound)
    high = groups.sum_int(values >> 32, bound >> 32)
    low = groups.sum_int(values & 0xFFFFFFFF, 2**32)
    return _joined_halves(high, low)


def _joined_halves(high: np.ndarray, low: np.ndarray) -> list[int]:
    """Per group high * 2**32 + low as Python ints (sums of the two 32-bit halves; per group,
    not per row)."""
    return [(h << 32) + lo for h, lo in zip(high.tolist(), low.tolist())]


def round_div(totals, counts: np.ndarray, valid: np.ndarray, factor: int):
    """round_half_away_from_zero(total * factor / count) per group (count > 0 where valid), as
    Arrow's decimal mean rounds."""
    safe = np.where(valid, counts, 1)
    if isinstance(totals, np.ndarray) and (
            len(totals) == 0 or int(np.abs(totals).max()) * factor < 2**62):
        q, r = np.divmod(np.abs(totals) * factor, safe)
        q = q + (2 * r >= safe)
        return np.where(totals < 0, -q, q)
    out = []
    for total, c in zip([int(t) for t in totals], safe.tolist()):
        q, r = divmod(abs(total) * factor, c)
        q += 2 * r >= c
        out.append(-q if total < 0 else q)
    return out


def totals_of(parts: list) -> tuple[np.ndarray | list[int], np.ndarray]:
    """Per group the exact total of the sums in `parts` (see `_exact_sum`; or one DECIMAL sum)
    and its validity: int64 values, or Python ints when they may not fit."""
    valid = np.asarray(pc.is_valid(parts[0]))
    if pa.types.is_decimal(parts[0].type):
        col = parts[0].combine_chunks() if isinstance(parts[0], pa.ChunkedArray) else parts[0]
        values = decimal_int64.unscaled(col)
        if values is not None:
            return values, valid
        return [decimal_int64.to_unscaled(v, col.type.scale) if v is not None else 0
                for v in col.to_pylist()], valid
    arrays = [np.asarray(p.fill_null(0)) for p in parts]
    if len(arrays) == 1:
        return arrays[0], valid
    high, low = arrays
    return _joined_halves(high, low), valid


def decimal_from_totals(totals, valid: np.ndarray, t: pa.DataType) -> pa.Array:
    """A decimal128 array of type `t` from unscaled totals (int64 or Python ints)."""
    if isinstance(totals, np.ndarray):
        return decimal_int64.from_unscaled(totals, None if valid.all() else valid, t)
    return pa.array([decimal_int64.to_decimal(v, t.scale) if ok else None
                     for v, ok in zip(totals, valid)], t)


def _call(groups, call, arg, n: int):
    func = call.func
    if func == "count_all":
        return pa.array(groups.counts.astype(np.int64))
    if func == "count":
        if isinstance(arg, Unscaled):
            valid = arg.valid
        else:
            valid = np.asarray(pc.is_valid(arg)) if arg.null_count else None
        return pa.array(_counts(groups, valid).astype(np.int64))
    if func not in ("sum", "mean", "min", "max"):
        return None
    floats = _floats(arg)
    if floats is not None:
        if func in ("min", "max"):
            return None
        values, valid = floats
        sums = groups.sum_float(values)
        if sums is None:
            return None
        counts = _counts(groups, valid)
        result = sums if func == "sum" else sums / np.where(counts > 0, counts, 1)
        return _with_nulls(result, counts > 0, pa.float64())
    found = _numbers(arg)
    if found is None:
        return None
    values, valid, t, bound = found
    counts = _counts(groups, valid)
    present = counts > 0
    if func in ("min", "max"):
        if pa.types.is_boolean(t):
            return None
        return _with_nulls(groups.extreme(values, valid, func == "max"), present, t)
    if pa.types.is_date(t) or pa.types.is_timestamp(t):
        return None  # no SUM/AVG of dates here: Acero's error stands
    if pa.types.is_decimal(t):
        totals = _exact_sums(groups, values, bound)
        if func == "sum":
            return decimal_from_totals(totals, present, pa.decimal128(38, t.scale))
        out = pa.decimal128(38, max(t.scale, 4))
        return decimal_from_totals(round_div(totals, counts, present, 10 ** (out.scale - t.scale)),
                                   present, out)
    if func == "sum":  # integers: int64, wrapping as Arrow's sum does
        return _with_nulls(groups.sum_int(values, bound), present, pa.int64())
    if bound * n >= _FLOAT_EXACT:
        return None  # AVG adds doubles: the integer sum would differ once past 2^53
    sums = groups.sum_int(values, bound).astype(np.float64)
    return _with_nulls(sums / np.where(present, counts, 1), present, pa.float64())


def aggregate(groups, calls: list, inp) -> dict | None:
    """{output name: array} for every call over `groups`, or None if one is not covered."""
    out = {}
    for call in calls:
        arg = inp.raw(call.arg) if call.arg is not None else None
        if isinstance(arg, pa.ChunkedArray):
            t = arg.type
            arg = Unscaled.of_column(arg.chunks, t, arg.combine_chunks) \
                if pa.types.is_decimal128(t) and t.precision <= 18 else contiguous(arg)
        result = _call(groups, call, arg, inp.num_rows)
        if result is None:
            return None
        out[call.output] = result
    return out
