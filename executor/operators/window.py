"""Window functions over Arrow tables, vectorised with numpy.

Rows are sorted by (partition keys, order keys) once per distinct window; then, per row, the
partition bounds and peer-group bounds come from flag arrays and running maxima, and each frame
is an index interval [lo, hi]. Every function is an array formula over those indices:

    row_number = i - part_start + 1        rank = peer_start - part_start + 1
    dense_rank = peers seen in partition    ntile, lag/lead, first/last_value: index arithmetic
    sum/count/avg over [lo, hi]            prefix sums: S[hi+1] - S[lo]
    min/max over [lo, hi]                  sparse table over value ranks (O(n log n))

The results are scattered back to the input order. No Python loop over rows or partitions.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from executor.operators.sort import sort_indices


def _differs(col: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """For rows 1..n-1: does the value differ from the previous row's (NULLs equal)?"""
    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    a, b = arr.slice(1), arr.slice(0, len(arr) - 1)
    eq = pc.fill_null(pc.equal(a, b), False)
    both_null = pc.and_(pc.is_null(a), pc.is_null(b))
    return ~np.asarray(pc.or_(eq, both_null).to_numpy(zero_copy_only=False), dtype=bool)


def _starts(new: np.ndarray) -> np.ndarray:
    idx = np.arange(len(new))
    return np.maximum.accumulate(np.where(new, idx, 0))


def _ends(new: np.ndarray) -> np.ndarray:
    n = len(new)
    last = np.append(new[1:], True)  # row i ends its group if row i+1 starts a new one
    idx = np.arange(n)
    return np.minimum.accumulate(np.where(last, idx, n - 1)[::-1])[::-1]


class _Frames:
    """Partition and peer-group bounds of sorted rows."""

    def __init__(self, table: pa.Table, partition: list[str], order: list[str]):
        n = table.num_rows
        part_new = np.zeros(n, dtype=bool)
        part_new[0] = True
        for name in partition:
            part_new[1:] |= _differs(table.column(name))
        peer_new = part_new.copy()
        for name in order:
            peer_new[1:] |= _differs(table.column(name))
        self.i = np.arange(n)
        self.part_new, self.peer_new = part_new, peer_new
        self.part_start, self.part_end = _starts(part_new), _ends(part_new)
        self.peer_start, self.peer_end = _starts(peer_new), _ends(peer_new)

    def bounds(self, frame: tuple) -> tuple[np.ndarray, np.ndarray]:
        kind, start, end = frame
        if kind == "range":
            lo = self.part_start if start is None else self.peer_start
            hi = self.part_end if end is None else self.peer_end
            return lo, hi
        lo = self.part_start if start is None else np.maximum(self.i + start, self.part_start)
        hi = self.part_end if end is None else np.minimum(self.i + end, self.part_end)
        return lo, hi


def _values(col: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray, pa.DataType]:
    """(numbers, valid mask, result type) for prefix sums; decimals as unscaled integers:
    int64 when every prefix sum fits (the sum of absolute values stays below 2**62), else
    Python ints (object arrays: exact, slower), as DECIMAL sums must not wrap."""
    arr = col.combine_chunks()
    valid = np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    t = arr.type
    if pa.types.is_decimal(t):
        if pa.types.is_decimal256(t):
            arr = arr.cast(pa.decimal128(38, t.scale))  # a SUM's type: DECIMAL(38, s)
        words = np.frombuffer(arr.buffers()[1], dtype=np.int64)[
            arr.offset * 2:(arr.offset + len(arr)) * 2]
        low, high = words[0::2], words[1::2]
        out_type = pa.decimal128(38, t.scale)
        if np.array_equal(high, low >> 63) and \
                float(np.abs(np.where(valid, low, 0).astype(np.float64)).sum()) < 2.0 ** 62:
            return np.where(valid, low, 0), valid, out_type
        wide = high.astype(object) * (1 << 64) + low.view(np.uint64).astype(object)
        return np.where(valid, wide, 0), valid, out_type
    if pa.types.is_integer(t) or pa.types.is_boolean(t):
        return np.asarray(pc.fill_null(arr.cast(pa.int64()), 0).to_numpy()), valid, pa.int64()
    return np.asarray(pc.fill_null(arr.cast(pa.float64()), 0).to_numpy()), valid, pa.float64()


def _decimal_from_unscaled(values: np.ndarray, valid: np.ndarray, t: pa.DataType) -> pa.Array:
    if values.dtype == object:  # Python ints (large sums): through Decimal, exact
        return pa.array([Decimal(int(v)).scaleb(-t.scale) if ok else None
                         for v, ok in zip(values, valid)], t)
    words = np.empty(len(values) * 2, dtype=np.int64)
    words[0::2] = values
    words[1::2] = values >> 63
    mask = pa.array(valid).buffers()[1] if not valid.all() else None
    return pa.Array.from_buffers(t, len(values), [mask, pa.py_buffer(words.tobytes())],
                                 null_count=-1 if mask is not None else 0)


def _frame_sum(col, lo, hi, func: str) -> pa.Array:
    empty = lo > hi
    lo_c, hi_c = np.minimum(lo, hi + 1), hi + 1
    valid = np.asarray(pc.is_valid(col).to_numpy(zero_copy_only=False), dtype=bool)
    counts = np.concatenate(([0], np.cumsum(valid.astype(np.int64))))
    count = np.where(empty, 0, counts[hi_c] - counts[lo_c])
    if func == "count":  # any type: only validity counts
        return pa.array(count, pa.int64())
    vals, valid, out_type = _values(col)
    prefix = np.concatenate((np.zeros(1, dtype=vals.dtype), np.cumsum(vals)))
    total = prefix[hi_c] - prefix[lo_c]
    has = count > 0
    if func == "sum":
        if pa.types.is_decimal(out_type):
            return _decimal_from_unscaled(total, has, out_type)
        return pa.array(total, out_type, mask=~has)
    # mean
    if pa.types.is_decimal(out_type) and total.dtype == object:
        scale = max(out_type.scale, 4)
        quantum = Decimal(1).scaleb(-scale)
        means = [(Decimal(int(t)).scaleb(-out_type.scale) / int(c)).quantize(
                     quantum, rounding=ROUND_HALF_UP) if ok else None
                 for t, c, ok in zip(total, count, has)]
        return pa.array(means, pa.decimal128(38, scale))
    if pa.types.is_decimal(out_type):
        scale = out_type.scale
        mean = total / np.where(has, count, 1) / (10 ** scale)
        return pa.array(mean, pa.float64(), mask=~has).cast(pa.decimal128(38, max(scale, 4)), safe=False)
    return pa.array(total / np.where(has, count, 1), pa.float64(), mask=~has)


def _frame_minmax(col, lo, hi, func: str) -> pa.Array:
    arr = col.combine_chunks()
    n = len(arr)
    # Dense ranks make every type comparable as integers (NULL -> -1, never chosen if others).
    uniques, inverse = np.unique(np.asarray(pc.rank(arr, sort_keys="ascending", tiebreaker="dense",
                                                    null_placement="at_end").to_numpy()), return_inverse=True)
    ranks = inverse.astype(np.int64)
    valid = np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    big = np.iinfo(np.int64).max
    key = np.where(valid, ranks if func == "max" else -ranks, -big)
    table = [key]
    length = 1
    while length * 2 <= n:
        prev = table[-1]
        nxt = prev.copy()
        nxt[:n - length] = np.maximum(prev[:n - length], prev[length:])
        table.append(nxt)
        length *= 2
    empty = lo > hi
    width = np.where(empty, 1, hi - lo + 1)
    level = np.floor(np.log2(width)).astype(np.int64)
    stacked = np.stack(table)
    lo_c = np.where(empty, 0, lo)
    hi_start = np.where(empty, 0, hi - (1 << level) + 1)
    best = np.maximum(stacked[level, lo_c], stacked[level, hi_start])
    found = (best != -big) & ~empty
    chosen = np.where(found, best if func == "max" else -best, 0)
    # Map the chosen rank back to a row holding that value.
    row_of_rank = np.zeros(len(uniques), dtype=np.int64)
    row_of_rank[ranks[valid]] = np.arange(n)[valid]
    out = arr.take(pa.array(row_of_rank[chosen]))
    return pc.if_else(pa.array(found), out, pa.nulls(n, arr.type))


def _shift(col, frames: _Frames, call, default) -> pa.Array:
    arr = col.combine_chunks()
    src = frames.i - call.offset if call.func == "lag" else frames.i + call.offset
    ok = (src >= frames.part_start) & (src <= frames.part_end)
    taken = arr.take(pa.array(np.where(ok, src, 0)))
    fallback = _default(default.combine_chunks(), arr.type) if default is not None \
        else pa.nulls(len(arr), arr.type)
    return pc.if_else(pa.array(ok), taken, fallback)


def _default(default: pa.Array, t: pa.DataType):
    """LAG/LEAD's default in the argument's type, as Doris casts it (the function returns the
    argument's type): a decimal or double into an integer truncates, a value the type cannot
    hold becomes NULL. The default is a constant (Doris requires one)."""
    try:
        return default.cast(t)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    value = default[0].as_py() if len(default) else None
    if value is not None and pa.types.is_integer(t):
        value = int(value)
    elif value is not None and pa.types.is_decimal(t):
        value = Decimal(str(value)).quantize(Decimal(1).scaleb(-t.scale), rounding=ROUND_HALF_UP)
    try:
        return pa.scalar(value, t)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, ValueError):
        return pa.scalar(None, t)


def _compute(table: pa.Table, frames: _Frames, call) -> pa.Array:
    f = call.func
    n = table.num_rows
    if f == "row_number":
        return pa.array(frames.i - frames.part_start + 1, pa.int64())
    if f == "rank":
        return pa.array(frames.peer_start - frames.part_start + 1, pa.int64())
    if f == "dense_rank":
        c = np.cumsum(frames.peer_new)
        return pa.array(c - c[frames.part_start] + 1, pa.int64())
    size = frames.part_end - frames.part_start + 1
    if f == "ntile":
        r = frames.i - frames.part_start
        q, rem = size // call.offset, size % call.offset
        big = rem * (q + 1)
        tile = np.where(r < big, r // (q + 1), rem + (r - big) // np.maximum(q, 1))
        return pa.array(tile + 1, pa.int64())
    if f == "percent_rank":
        rank = frames.peer_start - frames.part_start
        return pa.array(np.where(size > 1, rank / np.maximum(size - 1, 1), 0.0))
    if f == "cume_dist":
        return pa.array((frames.peer_end - frames.part_start + 1) / size)
    if f in ("lag", "lead"):
        default = table.column(call.default) if call.default is not None else None
        return _shift(table.column(call.arg), frames, call, default)
    lo, hi = frames.bounds(call.frame)
    if f == "count_all":
        return pa.array(np.where(lo > hi, 0, hi - lo + 1), pa.int64())
    col = table.column(call.arg)
    if f in ("first_value", "last_value"):
        pick = lo if f == "first_value" else hi
        ok = lo <= hi
        if getattr(call, "ignore_nulls", False):  # the frame's first / last non-NULL value
            valid = np.asarray(col.combine_chunks().is_valid().to_numpy(zero_copy_only=False),
                               dtype=bool)
            idx = np.arange(n)
            if f == "first_value":  # next valid row at or after i (n: none)
                nxt = np.minimum.accumulate(np.where(valid, idx, n)[::-1])[::-1]
                pick = nxt[np.minimum(lo, n - 1)]
                ok = ok & (pick <= hi)
            else:  # previous valid row at or before i (-1: none)
                prev = np.maximum.accumulate(np.where(valid, idx, -1))
                pick = prev[np.clip(hi, 0, n - 1)]
                ok = ok & (pick >= lo)
            pick = np.clip(pick, 0, n - 1)
        out = col.combine_chunks().take(pa.array(np.where(ok, pick, 0)))
        return pc.if_else(pa.array(ok), out, pa.nulls(n, col.type))
    if f in ("sum", "count", "mean"):
        return _frame_sum(col, lo, hi, f)
    return _frame_minmax(col, lo, hi, f)


def run_window(table: pa.Table, calls: list) -> pa.Table:
    if table.num_rows == 0:
        for call in calls:
            t = pa.int64() if call.func in ("row_number", "rank", "dense_rank", "ntile", "count",
                                            "count_all") else pa.float64()
            if call.arg is not None and call.func in ("min", "max", "lag", "lead", "first_value",
                                                      "last_value"):
                t = table.schema.field(call.arg).type
            table = table.append_column(call.output, pa.nulls(0, t))
        return table
    cache: dict = {}
    for call in calls:
        key = (tuple(call.partition_by), tuple((k.name, k.descending, k.nulls_at_start()) for k in call.order_by))
        if key not in cache:
            keys = [_Key(p, False) for p in call.partition_by] + list(call.order_by)
            perm = sort_indices(table, keys) if keys else pa.array(np.arange(table.num_rows))
            ordered = table.take(perm)
            cache[key] = (perm, ordered, _Frames(ordered, call.partition_by,
                                                 [k.name for k in call.order_by]))
        perm, ordered, frames = cache[key]
        result = _compute(ordered, frames, call)
        inverse = np.empty(len(perm), dtype=np.int64)
        inverse[np.asarray(perm)] = np.arange(len(perm))
        table = table.append_column(call.output, result.take(pa.array(inverse)))
    return table


class _Key:
    def __init__(self, name: str, descending: bool):
        self.name, self.descending = name, descending

    def nulls_at_start(self) -> bool:
        return not self.descending
