"""Order-preserving int64 codes of sort keys: one integer per row that sorts as the key columns do.

    codes(table, keys) -> np.ndarray (int64) | None

When every key column is an integer, date, time, timestamp or boolean column and their value
ranges fit in 63 bits together, each column's values become 0 (NULL) or 1 + (value - min) (no
NULL slot when the column has none), packed high to low in key order; otherwise None and the
caller sorts with Arrow. Codes order rows exactly as `pc.sort_indices` over the columns
(ascending, NULLs first) does, and equal codes mean equal keys.

Why: a merge-on-read sorts the rows of several rowsets concatenated in version order, runs that
are each sorted already. Arrow's multi-column sort does not take advantage of that; numpy's
stable sort of one int64 per row is a timsort, close to linear on a few long runs (a tablet's
merged base followed by its newer small rowsets: 1.1 ms -> 0.3 ms for 20k rows of two INT
keys, storage/merged_base.py).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from storage.arrays import contiguous

_BITS = 63


def _values(arr: pa.Array) -> np.ndarray | None:
    """The column's values as int64 (NULL slots hold anything), or None for other types."""
    t = arr.type
    if pa.types.is_boolean(t):
        return np.asarray(arr.fill_null(False), dtype=np.int64) if arr.null_count else \
            np.asarray(arr, dtype=np.int64)
    if not (pa.types.is_integer(t) or pa.types.is_date(t) or pa.types.is_time(t)
            or pa.types.is_timestamp(t) or pa.types.is_duration(t)):
        return None
    if t == pa.uint64():
        return None  # does not fit int64 in general
    width = t.bit_width // 8
    data = arr.buffers()[1]
    if data is None:
        return None
    raw = np.frombuffer(data, dtype=f"{'u' if pa.types.is_unsigned_integer(t) else 'i'}{width}",
                        count=len(arr) + arr.offset)[arr.offset:]
    return raw.astype(np.int64, copy=False)


def codes(table: pa.Table, keys: list[str]) -> np.ndarray | None:
    """One int64 per row ordering as the key columns (see the module docstring), or None."""
    n = table.num_rows
    fields: list[tuple[np.ndarray, np.ndarray | None, int, int]] = []
    bits = 0
    for name in keys:
        arr = contiguous(table.column(name))
        values = _values(arr)
        if values is None:
            return None
        valid = np.asarray(arr.is_valid()) if arr.null_count else None
        present = values if valid is None else values[valid]
        if present.size == 0:
            low, span = 0, 0
        else:
            low, high = int(present.min()), int(present.max())
            span = high - low
        slots = span + 1 + (valid is not None)  # values (+ the NULL slot)
        width = max(1, (slots - 1).bit_length())
        bits += width
        if bits > _BITS:
            return None
        fields.append((values, valid, low, width))
    out = np.zeros(n, dtype=np.int64)
    for values, valid, low, width in fields:
        field = values - low
        if valid is not None:
            field = np.where(valid, field + 1, 0)
        out <<= width
        out |= field
    return out


def sorted_order(table: pa.Table, keys: list[str]) -> np.ndarray | None:
    """The stable ascending order of the rows by `keys` from their codes, or None."""
    packed = codes(table, keys)
    if packed is None:
        return None
    return np.argsort(packed, kind="stable")


def group_starts(table: pa.Table, keys: list[str]) -> np.ndarray | None:
    """Positions where a new key group starts in `table` (sorted by `keys`), or None."""
    packed = codes(table, keys)
    if packed is None:
        return None
    if packed.size == 0:
        return np.zeros(0, np.int64)
    return np.concatenate([[0], np.flatnonzero(packed[1:] != packed[:-1]) + 1]).astype(np.int64)
