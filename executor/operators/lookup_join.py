"""Lookup join: a hash join whose build side has unique integer keys over a dense range.

The usual star-schema join (a fact table probing a dimension by its primary key) needs no hash
table: the build keys index a position array over [min, max] (Doris builds the same kind of
direct-mapped table for small integer key ranges), each probe key is one gather, and the output
is the probe rows (taken only when some do not match) beside the build rows taken at the found
positions. It keeps the probe side's row order and is several times faster than Acero's hash
join with its output materialisation.

Used for inner and left outer joins on one integer key (an inner join's residual condition is
applied to its output by the caller), when the build keys are unique (checked while the table
is built) and span at most `MAX_SPAN_FACTOR` times their count (or `MIN_SPAN`): the table
then costs a few bytes per build row, and even a 1.5M-row build (TPC-H orders) beats Acero's
hash join built on a 320k-row probe side 3x; and for left and right semi / anti joins on one
integer key, whatever the build keys (membership only).
NULL keys never match, on either side.
Otherwise `lookup_join` returns None and the caller uses the general hash join.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from storage.value_set import ValueSet

KINDS = ("inner", "left outer")
MAX_SPAN_FACTOR = 16
MIN_SPAN = 1 << 16


def lookup_join(left: pa.Table, right: pa.Table, node,
                needed: frozenset | None = None) -> pa.Table | None:
    """`left JOIN right` as the hash join would give it (columns: left's, then right's; only
    those in `needed` when given), or None when this join is not one a lookup table answers."""
    if len(node.left_keys) != 1:
        return None
    lk, rk = left.column(node.left_keys[0]), right.column(node.right_keys[0])
    if not (_signed_or_small(lk.type) and _signed_or_small(rk.type)):
        return None
    if node.kind in _MEMBERSHIP:
        return None if node.residual is not None else _semi(left, right, lk, rk, node, needed)
    if node.kind not in KINDS or node.residual is not None and node.kind != "inner":
        return None  # (an inner join's residual filters the output afterwards)
    positions = _build(rk)
    if positions is None:
        return None
    table, low = positions
    found = _probe(lk, table, low)  # build row per probe row, -1: no match
    if needed is not None:  # gather only the columns the output keeps (at least one)
        right = right.select([c for c in right.column_names if c in needed])
        left = left.select([c for c in left.column_names if c in needed]
                           or ([] if right.num_columns else left.column_names[:1]))
    if node.kind == "inner":
        matched = found >= 0
        probe = _rows(left, matched)
        build = right.take(pa.array(found[matched] if not matched.all() else found))
    else:  # left outer: unmatched probe rows get NULLs
        probe = left
        build = right.take(pa.array(found, mask=found < 0))
    return pa.Table.from_arrays(probe.columns + build.columns,
                                names=probe.column_names + build.column_names)


# semi / anti joins: (the output is the right side, keep the rows that match)
_MEMBERSHIP = {"left semi": (False, True), "left anti": (False, False),
               "right semi": (True, True), "right anti": (True, False)}


def _semi(left: pa.Table, right: pa.Table, lk: pa.ChunkedArray, rk: pa.ChunkedArray, node,
          needed: frozenset | None) -> pa.Table:
    """Semi / anti joins need no positions, only membership: the build keys (duplicates and
    any span allowed) become a value set (storage/value_set.py: a lookup table over a dense
    span, else a binary search), probed once per output-side row. A NULL key never matches,
    so it is kept by an anti join (NOT EXISTS), dropped by a semi join."""
    output_right, matching = _MEMBERSHIP[node.kind]
    out, probe_keys, build_keys = (right, rk, lk) if output_right else (left, lk, rk)
    if needed is not None:
        out = out.select([c for c in out.column_names if c in needed] or out.column_names[:1])
    build = build_keys.combine_chunks() if build_keys.num_chunks != 1 else build_keys.chunk(0)
    probe = probe_keys.combine_chunks() if probe_keys.num_chunks != 1 else probe_keys.chunk(0)
    if build.type != probe.type:  # (run_join gives both the same type; be safe anyway)
        build, probe = build.cast(pa.int64()), probe.cast(pa.int64())
    if len(build) - build.null_count == 0:
        hit = np.zeros(len(probe), dtype=bool)
    else:
        hit = ValueSet(build).contains_numpy(probe)
    return _rows(out, hit if matching else ~hit)


def _signed_or_small(t: pa.DataType) -> bool:
    return pa.types.is_integer(t) and t != pa.uint64()


def _build(keys: pa.ChunkedArray) -> tuple[np.ndarray, int] | None:
    """Position of each build key over [low, high] (-1: no build row), or None if the keys are
    not unique or too sparse."""
    arr = keys.combine_chunks() if keys.num_chunks != 1 else keys.chunk(0)
    if len(arr) >= 1 << 31:
        return None
    rows = np.arange(len(arr), dtype=np.int32)
    if arr.null_count:
        valid = np.asarray(pc.is_valid(arr))
        rows = rows[valid]
        values = arr.filter(pc.is_valid(arr)).to_numpy().astype(np.int64, copy=False)
    else:
        values = arr.to_numpy().astype(np.int64, copy=False)
    if len(values) == 0:
        return None
    low, high = int(values.min()), int(values.max())
    span = high - low + 1
    if span > max(MAX_SPAN_FACTOR * len(values), MIN_SPAN):
        return None
    table = np.full(span + 1, -1, dtype=np.int32)  # the last slot: "outside [low, high]"
    offsets = values - low
    table[offsets] = rows
    if not np.array_equal(table[offsets], rows):  # a later duplicate overwrote an earlier row
        return None
    return table, low


def _probe(keys: pa.ChunkedArray, table: np.ndarray, low: int) -> np.ndarray:
    arr = keys.combine_chunks() if keys.num_chunks != 1 else keys.chunk(0)
    span = len(table) - 1
    values = (pc.fill_null(arr, low) if arr.null_count else arr).to_numpy()
    # values - low as unsigned: below the range wraps to huge offsets, clamped to the last slot
    offsets = np.subtract(values, low, dtype=np.int64).view(np.uint64)
    np.minimum(offsets, span, out=offsets)
    found = table.take(offsets.view(np.int64))
    if arr.null_count:
        found[~np.asarray(pc.is_valid(arr))] = -1
    return found


def _rows(table: pa.Table, keep: np.ndarray) -> pa.Table:
    if keep.all():
        return table
    return table.take(pa.array(np.flatnonzero(keep)))
