"""Folding a tablet's newest rows into the kept merge of its older versions, without sorting again.

A read of an Aggregate (or merge-on-read Unique) tablet under a stream of small loads takes the
kept merge of the older versions (storage/merged_base.py: N rows, sorted by key, one row per
key) and the rows of the rowsets published since (m rows, m much smaller than N). Sorting the
N + m rows again and folding them cost every query ~0.36 ms per 25k-row tablet (numpy's timsort
over the runs, a `take` of every column, the group search). Here only the m rows are sorted and
folded among themselves; each is then found in the kept rows by binary search on packed key
codes, folded into the kept row of its key (SUM, MAX, MIN, REPLACE, as storage/merge.py does)
or inserted before that key's successor: O(m log N) plus one copy of each column.

    KeptKeys          the kept rows' packed key codes (ascending, unique) and each key column's
                      (min, max) they were packed with
    kept_keys(table, keys)
                      KeptKeys for a merged table, or None when it does not qualify
    fold_into(kept, state, newer, keys, aggregations)
                      (merged table, its KeptKeys), or None: the caller sorts and merges

It qualifies where the result is exactly the general path's: every key and value column of an
integer, date or timestamp type, without NULLs, in both tables; value columns aggregated by
SUM (wrapping in the column's type, as merge.py's reduceat does; integer addition is
associative modulo 2^n, so folding the new rows first changes nothing), MAX, MIN or REPLACE;
and the packed keys fit in 63 bits. Codes order rows as the key columns do (ascending; no NULL
slot is needed). The caller keeps the merge order equal to the key columns (no sequence
column).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from storage.arrays import contiguous

_BITS = 63
FOLDS = ("SUM", "MAX", "MIN", "REPLACE")


@dataclass(frozen=True)
class KeptKeys:
    codes: np.ndarray                    # int64, one per kept row, ascending, unique
    ranges: tuple[tuple[int, int], ...]  # (min, max) of each key column the codes packed

    @property
    def nbytes(self) -> int:
        return self.codes.nbytes


def _numbers(col: pa.Array | pa.ChunkedArray) -> np.ndarray | None:
    """The column's values as a numpy array (no copy where Arrow allows), or None for types
    and NULLs this path does not take."""
    arr = contiguous(col)
    if arr.null_count:
        return None
    t = arr.type
    if pa.types.is_integer(t):
        return arr.to_numpy(zero_copy_only=False)
    if pa.types.is_date32(t):
        return arr.view(pa.int32()).to_numpy(zero_copy_only=False)
    if pa.types.is_date64(t) or pa.types.is_timestamp(t):
        return arr.view(pa.int64()).to_numpy(zero_copy_only=False)
    return None


def _arrow(values: np.ndarray, t: pa.DataType) -> pa.Array:
    if pa.types.is_integer(t):
        return pa.array(values, t)
    if pa.types.is_date32(t):
        return pa.array(values, pa.int32()).view(t)
    return pa.array(values, pa.int64()).view(t)


def _pack(columns: list[np.ndarray], ranges: tuple[tuple[int, int], ...]) -> np.ndarray | None:
    widths = [max(1, int(high - low).bit_length()) for low, high in ranges]
    if sum(widths) > _BITS:
        return None
    out = np.zeros(len(columns[0]) if columns else 0, dtype=np.int64)
    for values, (low, _), width in zip(columns, ranges, widths):
        out <<= width
        out |= values.astype(np.int64, copy=False) - low
    return out


def _key_columns(table: pa.Table, keys: list[str]) -> list[np.ndarray] | None:
    columns = []
    for name in keys:
        values = _numbers(table.column(name))
        if values is None or values.dtype == np.uint64:
            return None  # uint64 keys may not fit int64 codes
        columns.append(values)
    return columns


def kept_keys(table: pa.Table, keys: list[str]) -> KeptKeys | None:
    """The packed codes of a merged (sorted, one row per key) table, or None."""
    if not keys or table.num_rows == 0:
        return None
    columns = _key_columns(table, keys)
    if columns is None:
        return None
    ranges = tuple((int(c.min()), int(c.max())) for c in columns)
    codes = _pack(columns, ranges)
    return None if codes is None else KeptKeys(codes, ranges)


def _fold_runs(values: np.ndarray, starts: np.ndarray, ends: np.ndarray,
               aggregation: str) -> np.ndarray:
    """One value per run [start, end) of rows with equal keys, in version order."""
    if aggregation == "SUM":
        return np.add.reduceat(values, starts, dtype=values.dtype)
    if aggregation == "MAX":
        return np.maximum.reduceat(values, starts)
    if aggregation == "MIN":
        return np.minimum.reduceat(values, starts)
    return values[ends - 1]  # REPLACE: the newest


def _fold_at(values: np.ndarray, at: np.ndarray, newer: np.ndarray, aggregation: str) -> None:
    """Fold `newer` into `values` at the (distinct) positions `at`, in place."""
    if aggregation == "SUM":
        values[at] += newer  # wraps in the column's type
    elif aggregation == "MAX":
        values[at] = np.maximum(values[at], newer)
    elif aggregation == "MIN":
        values[at] = np.minimum(values[at], newer)
    else:
        values[at] = newer


def fold_into(kept: pa.Table, state: KeptKeys, newer: pa.Table, keys: list[str],
              aggregations: dict[str, str]) -> tuple[pa.Table, KeptKeys] | None:
    """`kept` (merged, with `state`) and `newer` (rows of later versions, in version order)
    merged by the data model, with the result's KeptKeys; None where this path does not
    qualify (see the module docstring)."""
    names = kept.column_names
    if newer.column_names != names or newer.schema.types != kept.schema.types:
        return None
    values = [n for n in names if n not in keys]
    if any(aggregations.get(n) not in FOLDS for n in values):
        return None
    if newer.num_rows == 0:
        return kept, state
    new_keys = _key_columns(newer, keys)
    if new_keys is None:
        return None
    new_values = [_numbers(newer.column(n)) for n in values]
    kept_values = [_numbers(kept.column(n)) for n in values]
    if any(v is None for v in new_values) or any(v is None for v in kept_values):
        return None
    ranges = tuple((min(low, int(c.min())), max(high, int(c.max())))
                   for (low, high), c in zip(state.ranges, new_keys))
    kept_key_columns = _key_columns(kept, keys)
    if kept_key_columns is None:
        return None
    codes = state.codes
    if ranges != state.ranges:  # a key beyond the kept ranges: pack the kept keys again
        codes = _pack(kept_key_columns, ranges)
    new_codes = _pack(new_keys, ranges)
    if codes is None or new_codes is None:
        return None

    order = np.argsort(new_codes, kind="stable")  # equal keys stay in version order
    new_codes = new_codes[order]
    new_keys = [c[order] for c in new_keys]
    new_values = [v[order] for v in new_values]
    change = np.empty(len(new_codes), dtype=bool)
    change[:1] = True
    np.not_equal(new_codes[1:], new_codes[:-1], out=change[1:])
    starts = np.flatnonzero(change)
    if len(starts) < len(new_codes):  # the newer rows share keys: fold them first
        ends = np.append(starts[1:], len(new_codes))
        new_values = [_fold_runs(v, starts, ends, aggregations[n])
                      for v, n in zip(new_values, values)]
        new_keys = [c[starts] for c in new_keys]
        new_codes = new_codes[starts]

    at = np.searchsorted(codes, new_codes)
    found = at < len(codes)
    found[found] = codes[at[found]] == new_codes[found]
    fold_at, added = at[found], ~found
    # the j-th added row (ascending) lands at its kept successor's position + j; kept rows
    # fill the other slots in order
    successors = at[added]
    placed = successors + np.arange(len(successors))
    if len(placed):
        kept_slots = np.ones(len(codes) + len(placed), dtype=bool)
        kept_slots[placed] = False
        # where the kept rows folded into are in the result: after the added rows before them
        fold_to = fold_at + np.searchsorted(successors, fold_at, side="right")
    else:
        fold_to = fold_at

    def spliced(old: np.ndarray, new: np.ndarray, copy: bool = False) -> np.ndarray:
        if not len(placed):  # nothing added: the kept column as it is (read-only) or a copy
            return old.copy() if copy else old
        out = np.empty(len(kept_slots), dtype=old.dtype)
        out[kept_slots] = old
        out[placed] = new[added]
        return out

    columns: dict[str, np.ndarray] = {}
    for name, kept_column, new_column in zip(keys, kept_key_columns, new_keys):
        columns[name] = spliced(kept_column, new_column)
    for name, kept_column, new_column in zip(values, kept_values, new_values):
        # a fresh array (the kept table's buffers are read-only), the folds made in it
        out = spliced(kept_column, new_column, copy=bool(len(fold_at)))
        if len(fold_at):
            _fold_at(out, fold_to, new_column[found], aggregations[name])
        columns[name] = out
    merged = pa.Table.from_arrays([_arrow(columns[n], kept.schema.field(n).type) for n in names],
                                  schema=kept.schema)
    return merged, KeptKeys(spliced(codes, new_codes), ranges)
