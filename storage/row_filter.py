"""The exact row filter of a scan: the AND of its prepared predicates over a range of rows.

Owns how a conjunction is evaluated (Doris's vectorised predicate evaluation in the segment
iterator), as a numpy bool mask:

- columns are read lazily, only when a predicate needs them: once no row survives, the other
  predicate columns are never decoded;
- a comparison implied by an `IN` value set on the same column is skipped (a runtime filter
  sends `col >= min AND col <= max` with the exact set: the set decides every row alone; the
  comparisons still prune with the indexes);
- predicates run cheapest-and-most-selective first, ordered by the fraction of rows each let
  through in earlier segments of the scan (every segment of a scan shares the prepared
  predicates); a set lookup counts as `SET_COST` comparisons;
- once fewer than half of the rows survive, a predicate is evaluated on the survivors only
  (their values gathered with numpy), not on every row.
"""

from __future__ import annotations

import operator
from typing import Callable

import numpy as np
import pyarrow as pa

from storage.arrays import contiguous
from storage.predicate import PreparedPredicate

SET_COST = 3.0  # a lookup-table probe costs about three comparisons
UNSEEN_PASS = 0.5  # the pass fraction assumed for a predicate not yet evaluated

_IMPLIED = {">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt}


def row_mask(predicates: list[PreparedPredicate], column: Callable[[str], pa.Array],
             count: int) -> np.ndarray:
    """TRUE where every predicate holds over `count` rows; `column(name)` reads one column's
    rows (a contiguous array, read at most once per name by the caller's cache)."""
    order = _evaluation_order(predicates)
    if not order:
        return np.ones(count, dtype=bool)
    first = order[0]
    mask = first.evaluate_numpy(column(first.column))
    if not mask.flags.writeable or mask.base is not None:
        mask = mask.copy()
    alive = int(np.count_nonzero(mask))
    first.observe(count, alive)
    live: np.ndarray | None = None  # the surviving rows once they are fewer than half
    for p in order[1:]:
        if alive == 0:
            break
        arr = column(p.column)
        if live is None and 2 * alive >= count:
            hit = p.evaluate_numpy(arr)
            mask &= hit
            p.observe(count, int(np.count_nonzero(hit)))
            alive = int(np.count_nonzero(mask))
            continue
        if live is None:
            live = np.flatnonzero(mask)
        hit = p.evaluate_at(arr, live)
        live = live[hit]
        p.observe(alive, len(live))
        alive = len(live)
    if live is not None:
        mask = np.zeros(count, dtype=bool)
        mask[live] = True
    return mask


def combined_mask(predicates: list[PreparedPredicate], arrays: dict) -> pa.Array | None:
    """`row_mask` over whole columns given as `arrays` (name -> array) as an Arrow mask; None
    if there is no predicate."""
    if not predicates:
        return None
    read: dict[str, pa.Array] = {}

    def column(name: str) -> pa.Array:
        if name not in read:
            read[name] = contiguous(arrays[name])
        return read[name]

    return pa.array(row_mask(predicates, column, len(arrays[predicates[0].column])))


def _evaluation_order(predicates: list[PreparedPredicate]) -> list[PreparedPredicate]:
    sets = {}
    for p in predicates:
        vs = p.value_set
        if vs is not None and len(vs):
            sets.setdefault(p.column, []).append(vs)
    kept = [p for p in predicates if not _implied_by_a_set(p, sets.get(p.column))]
    return sorted(kept, key=_rank)


def _implied_by_a_set(p: PreparedPredicate, sets: list | None) -> bool:
    """Every value of one of the column's `IN` sets satisfies the comparison `p`."""
    check = _IMPLIED.get(p.op)
    if not sets or check is None or p.exact is None or p.never_true:
        return False
    bound = p.exact[0]
    for vs in sets:
        lowest, highest = vs.lowest, vs.highest
        try:
            if check(lowest, bound) and check(highest, bound):
                return True
        except TypeError:
            continue
    return False


def _rank(p: PreparedPredicate) -> float:
    """Expected cost per row removed: cost / (1 - pass fraction); lower runs first."""
    cost = SET_COST if p.value_set is not None else 1.0
    passed = p.pass_fraction
    return cost / max(1.0 - (UNSEEN_PASS if passed is None else passed), 1e-3)
