"""window_funnel(window, mode, ts, c1, ..., cn): the deepest funnel level each group reaches,
finished from the group's collected (timestamp, condition bits) lists, as Doris's
AggregateFunctionWindowFunnel evaluates them:

- a group's rows (those without a NULL argument) are ordered by timestamp (rows with equal
  timestamps keep their input order);
- every row where c1 holds starts a chain whose window ends `window` seconds after it; from the
  row matched last, level k is the next row (strictly after it) where ck holds, if its
  timestamp is within the window, else the chain stops;
- `fixed`: level k must be the very next row; `increase`: its timestamp must be greater than
  the previous level's; `deduplication`: no row between the previous level and it may hold an
  earlier condition; `default`: none of these;
- the result is the longest chain's level (INT), 0 when no row holds c1.

All starts of all groups advance together, one numpy step per level: for each condition the
index of the next row holding it (a reversed running minimum), then fancy indexing.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

MODES = ("default", "deduplication", "fixed", "increase")


def window_funnel(ts_lists, bit_lists, window_seconds: int, mode: str, levels: int) -> pa.Array:
    ts_lists = ts_lists.combine_chunks() if isinstance(ts_lists, pa.ChunkedArray) else ts_lists
    bit_lists = bit_lists.combine_chunks() if isinstance(bit_lists, pa.ChunkedArray) \
        else bit_lists
    n = len(ts_lists)
    result = np.zeros(n, dtype=np.int32)
    flat_ts = pc.list_flatten(ts_lists)
    parents = np.asarray(pc.list_parent_indices(ts_lists).to_numpy(), dtype=np.int64)
    keep = np.asarray(pc.is_valid(flat_ts).to_numpy(zero_copy_only=False), dtype=bool)
    if not keep.any():
        return pa.array(result)
    ts = np.asarray(flat_ts.cast(pa.int64()).fill_null(0).to_numpy(), dtype=np.int64)[keep]
    bits = np.asarray(pc.list_flatten(bit_lists).fill_null(0).to_numpy(), dtype=np.int64)[keep]
    parents = parents[keep]
    order = np.lexsort((ts, parents))  # stable: equal timestamps keep their input order
    ts, bits, parents = ts[order], bits[order], parents[order]
    m = len(ts)
    group_end = np.cumsum(np.bincount(parents, minlength=n))[parents]
    positions = np.arange(m, dtype=np.int64)

    def next_holding(k: int) -> np.ndarray:
        """[p] = the first row >= p where condition k holds (m: none); length m + 1."""
        idx = np.where((bits >> k) & 1 == 1, positions, m)
        return np.append(np.minimum.accumulate(idx[::-1])[::-1], m)

    nexts = [next_holding(k) for k in range(levels)]
    starts = np.flatnonzero(bits & 1)
    if len(starts) == 0:
        return pa.array(result)
    level = np.ones(len(starts), dtype=np.int32)
    window_end = ts[starts] + int(window_seconds) * 1_000_000
    ends = group_end[starts]
    prev, alive = starts.copy(), np.ones(len(starts), dtype=bool)
    for k in range(1, levels):
        after = np.minimum(prev + 1, m)
        cand = after if mode == "fixed" else nexts[k][after]
        ok = alive & (cand < ends)
        at = np.minimum(cand, m - 1)
        if mode == "fixed":
            ok &= (bits[at] >> k) & 1 == 1
        ok &= ts[at] <= window_end
        if mode == "increase":
            ok &= ts[at] > ts[prev]
        elif mode == "deduplication":
            for j in range(k):
                ok &= nexts[j][after] >= cand  # no earlier condition in between
        level += ok
        alive = ok
        prev = np.where(ok, cand, prev)
        if not alive.any():
            break
    np.maximum.at(result, parents[starts], level)
    return pa.array(result)
