"""The layout of Arrow list arrays (Doris ARRAY values) as numpy offsets over flat values.

Every ARRAY function works the same way: take a list array apart into int64 offsets (rebased to
0), the flat values they index and the rows' validity (`parts`), compute on the flat values
with Arrow / numpy kernels, and put a list array back together (`build`). A NULL row always has
zero length here, whatever produced it, so offsets alone say which values belong to which row.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def is_list(t: pa.DataType) -> bool:
    return pa.types.is_list(t) or pa.types.is_large_list(t)


def parts(arr: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, pa.Array, np.ndarray]:
    """(offsets int64 starting at 0, flat values, valid rows) of a list array."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    raw = np.asarray(arr.offsets, dtype=np.int64)
    start = int(raw[0]) if len(raw) else 0
    values = arr.values.slice(start, int(raw[-1]) - start) if len(raw) else arr.values.slice(0, 0)
    offsets = raw - start
    valid = np.ones(len(arr), dtype=bool) if arr.null_count == 0 else \
        np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    if arr.null_count:
        lengths = np.diff(offsets)
        if lengths[~valid].any():  # a NULL row over values: drop them
            values = values.filter(pa.array(np.repeat(valid, lengths)))
            lengths[~valid] = 0
            offsets = np.concatenate([[0], np.cumsum(lengths)])
    return offsets, values, valid


def lengths_of(offsets: np.ndarray) -> np.ndarray:
    return np.diff(offsets)


def parent_rows(offsets: np.ndarray) -> np.ndarray:
    """The row each flat value belongs to."""
    return np.repeat(np.arange(len(offsets) - 1, dtype=np.int64), np.diff(offsets))


def positions(offsets: np.ndarray) -> np.ndarray:
    """Each flat value's 0-based position within its row."""
    n = int(offsets[-1]) if len(offsets) else 0
    return np.arange(n, dtype=np.int64) - np.repeat(offsets[:-1], np.diff(offsets))


def build(offsets: np.ndarray, values: pa.Array, valid: np.ndarray | None = None,
          value_type: pa.DataType | None = None) -> pa.ListArray:
    """A list array of `values` cut at `offsets`, NULL where `valid` is False."""
    if value_type is not None and values.type != value_type:
        values = values.cast(value_type)
    mask = None if valid is None or valid.all() else pa.array(~valid)
    return pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), values, mask=mask)


def keep_values(offsets: np.ndarray, values: pa.Array, keep: np.ndarray,
                valid: np.ndarray) -> pa.ListArray:
    """The list array holding only the values where `keep` (numpy bool) is True."""
    kept = np.concatenate([[0], np.cumsum(keep.astype(np.int64))])
    return build(kept[offsets], values.filter(pa.array(keep)), valid)


def row_group_ids(offsets: np.ndarray) -> pa.Array:
    return pa.array(parent_rows(offsets))


def nonnull(values: pa.Array) -> np.ndarray:
    return np.ones(len(values), dtype=bool) if values.null_count == 0 else \
        np.asarray(pc.is_valid(values).to_numpy(zero_copy_only=False), dtype=bool)
