"""The values of an `IN` predicate, of the column's type, built once per scan and shared by every
segment and index that uses them.

    array       sorted, distinct, non-NULL values (pa.Array of the column type)
    numpy       the same as numpy (zone maps: one searchsorted of the page minimums)
    keys        the same as Python values (short key ranges, bloom filter hashes, bitmap
                lookups), converted only when one of them asks
    contains()  the exact row mask: for integer columns a lookup table over [min, max] when
                that span is small (Doris's bitmap runtime filter), else a binary search of
                the sorted values; other types use Arrow's hash set (`is_in`). Arrow's
                is_in rebuilds its hash table on every call, which for a runtime filter of
                10^5 values costs more than the scan itself; the table here is built once.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from storage import sorted_search
from storage.arrays import contiguous

MAX_LOOKUP_SPAN = 1 << 24  # bytes of a lookup table (one bool per integer in [min, max])
DENSE_SPAN = 8  # distinct_sorted marks a bitmap when [min, max] is at most 8x the value count


def distinct_sorted(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """The distinct non-NULL values, ascending. Integers over a span of at most DENSE_SPAN
    times their count: marked in a bitmap over [min, max] and read back in order (one pass,
    no sort); other integers: a numpy sort, then repeats dropped (Arrow's hash-based unique
    takes ~10x longer on a million keys)."""
    values = contiguous(values)
    values = values.drop_null()
    if not pa.types.is_integer(values.type):
        return pc.unique(values).sort()
    raw = values.to_numpy()
    if len(raw) and values.type != pa.uint64():
        low, high = int(raw.min()), int(raw.max())
        span = high - low + 1
        if span <= max(DENSE_SPAN * len(raw), 1024) and span <= MAX_LOOKUP_SPAN:
            present = np.zeros(span, dtype=bool)
            present[np.subtract(raw, low, dtype=np.int64)] = True
            found = np.flatnonzero(present) + low
            return pa.array(found.astype(raw.dtype, copy=False), values.type)
    ordered = np.sort(raw)
    keep = np.empty(len(ordered), dtype=bool)
    keep[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return pa.array(ordered[keep], values.type)


class ValueSet:
    def __init__(self, values: pa.Array):
        self.array = distinct_sorted(values)
        self._numpy: np.ndarray | None = None
        self._keys: list | None = None
        self._table: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.array)

    @property
    def numpy(self) -> np.ndarray:
        if self._numpy is None:
            self._numpy = self.array.to_numpy(zero_copy_only=False)
        return self._numpy

    @property
    def lowest(self):
        """The smallest value (Python object)."""
        return self.array[0].as_py()

    @property
    def highest(self):
        return self.array[len(self.array) - 1].as_py()

    @property
    def keys(self) -> list:
        if self._keys is None:
            self._keys = self.array.to_pylist()
        return self._keys

    def contains(self, arr: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
        """TRUE where the row's value is in the set; FALSE for NULL rows."""
        if not self.numeric:
            return pc.is_in(arr, value_set=self.array, skip_nulls=True)
        arr = contiguous(arr)
        return pa.array(self.contains_numpy(arr))

    @property
    def numeric(self) -> bool:
        """Rows are checked in numpy (`contains_values`): integer values, more than a few."""
        t = self.array.type
        return pa.types.is_integer(t) and t != pa.uint64() and len(self.array) > 64

    def contains_numpy(self, arr: pa.Array) -> np.ndarray:
        """`contains` as a numpy bool array."""
        if not self.numeric:
            return np.asarray(pc.is_in(arr, value_set=self.array, skip_nulls=True)
                              .to_numpy(zero_copy_only=False), dtype=bool)
        lo = int(self.numpy[0])
        hit = self.contains_values((pc.fill_null(arr, lo) if arr.null_count else arr).to_numpy())
        if arr.null_count:
            hit &= np.asarray(pc.is_valid(arr))
        return hit

    def contains_values(self, x: np.ndarray) -> np.ndarray:
        """Membership of integer values given as numpy (no NULLs); `numeric` sets only."""
        values = self.numpy
        lo = int(values[0])
        span = int(values[-1]) - lo + 1
        if span <= MAX_LOOKUP_SPAN:
            if self._table is None:
                table = np.zeros(span + 1, dtype=bool)  # the last slot: "outside the span"
                table[values.astype(np.int64) - lo] = True
                self._table = table
            # x - lo as unsigned: values below the set wrap around to huge offsets, and every
            # offset past the span is clamped to the last (False) slot. (numpy's take with
            # mode="clip" would do the same several times slower.)
            offset = np.subtract(x, lo, dtype=np.int64).view(np.uint64)
            np.minimum(offset, span, out=offset)
            return self._table.take(offset.view(np.int64))
        pos = np.minimum(sorted_search.search(values, x), len(values) - 1)
        return values[pos] == x
