"""Aggregates finished from each group's collected values (Arrow's `list` hash kernel), all
vectorised over the flattened lists (a sort by (group, value), then numpy indexing):

    percentile(x, p), percentile_approx(x, p), median(x), percentile_cont(x, p)
        the p-quantile with linear interpolation between the closest ranks, as Doris's exact
        `percentile` computes it (position (n - 1) * p); percentile_approx gives the same exact
        value (Doris's t-digest is an approximation of it); DOUBLE; NULLs skipped; a group
        without values is NULL
    max_by(k, v), min_by(k, v)
        k of the row with the largest (smallest) v; rows whose v is NULL are skipped; ties go to
        the first such row in input order
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def flatten_groups(lists: pa.ChunkedArray | pa.Array) -> tuple[pa.Array, np.ndarray, int]:
    """(the flat values, each value's group, the number of groups) of collected lists."""
    lists = lists.combine_chunks() if isinstance(lists, pa.ChunkedArray) else lists
    parents = np.asarray(pc.list_parent_indices(lists).to_numpy(), dtype=np.int64)
    return pc.list_flatten(lists), parents, len(lists)


def quantile(lists, q: float) -> pa.Array:
    """The q-quantile of each group's values (see the module docstring)."""
    flat, parents, n = flatten_groups(lists)
    keep = np.asarray(pc.is_valid(flat))
    values = np.asarray(pc.cast(flat.filter(pa.array(keep)), pa.float64()).to_numpy(),
                        dtype=np.float64)
    parents = parents[keep]
    order = np.lexsort((values, parents))
    values, parents = values[order], parents[order]
    counts = np.bincount(parents, minlength=n)
    present = counts > 0
    if not present.any():
        return pa.nulls(n, pa.float64())
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    position = (np.maximum(counts, 1) - 1) * q
    low = np.floor(position).astype(np.int64)
    high = np.minimum(low + 1, np.maximum(counts, 1) - 1)
    lo_idx = np.where(present, starts + low, 0)
    hi_idx = np.where(present, starts + high, 0)
    result = values[lo_idx] + (values[hi_idx] - values[lo_idx]) * (position - low)
    return pa.array(result, mask=~present)


def value_at_extreme(keys, by, largest: bool) -> pa.Array:
    """max_by / min_by: per group, the key of the row whose `by` is the largest (smallest)."""
    flat_keys, parents, n = flatten_groups(keys)
    flat_by, _, _ = flatten_groups(by)
    keep = np.asarray(pc.is_valid(flat_by))
    rows = np.flatnonzero(keep)
    parents = parents[keep]
    if not len(rows):
        return pa.nulls(n, flat_keys.type)
    ranks = np.asarray(pc.rank(flat_by.filter(pa.array(keep)), sort_keys="ascending",
                               tiebreaker="dense").to_numpy(), dtype=np.int64)
    # Sort by group, then by rank (descending for max_by), then by input position (ties:
    # the first row wins); the first row of each group is the answer.
    order = np.lexsort((np.arange(len(rows)), -ranks if largest else ranks, parents))
    parents_sorted = parents[order]
    first = np.concatenate(([True], parents_sorted[1:] != parents_sorted[:-1]))
    winners = rows[order[first]]
    groups = parents_sorted[first]
    position = np.full(n, -1, dtype=np.int64)
    position[groups] = winners
    picked = flat_keys.take(pa.array(np.where(position >= 0, position, 0)))
    return pc.if_else(pa.array(position >= 0), picked, pa.nulls(n, flat_keys.type))
