"""storage/segment/row_ranges.py: RowRanges' algebra equals the same operations on Python sets
of row ids, on random interval sets (including the fast paths: one range spanning the other,
pages already sorted)."""

import random

import numpy as np
import pytest

from storage.segment.row_ranges import RowRanges


def _rows(r: RowRanges) -> set[int]:
    return {x for s, e in zip(r.starts.tolist(), r.ends.tolist()) for x in range(s, e)}


def _random(rng: random.Random, span: int) -> tuple[list[int], list[int]]:
    n = rng.randint(0, 6)
    starts = [rng.randint(0, span) for _ in range(n)]
    return starts, [s + rng.randint(-1, 8) for s in starts]  # some empty or reversed


def _normal(r: RowRanges) -> bool:  # sorted, disjoint, non-adjacent, non-empty
    s, e = r.starts, r.ends
    return bool((e > s).all() and (s[1:] > e[:-1]).all())


@pytest.mark.parametrize("seed", range(300))
def test_operations_equal_set_operations(seed):
    rng = random.Random(seed)
    span = rng.choice([5, 20, 60])
    a_s, a_e = _random(rng, span)
    b_s, b_e = _random(rng, span)
    a, b = RowRanges.of(a_s, a_e), RowRanges.of(b_s, b_e)
    assert _rows(a) == {x for s, e in zip(a_s, a_e) for x in range(s, e)} and \
        (a.is_empty or _normal(a))
    if rng.random() < 0.3:
        a = RowRanges.full(span + 10)  # the whole segment: intersect's fast path
    want_a = _rows(a)
    for got in (a.intersect(b), b.intersect(a)):
        assert _rows(got) == want_a & _rows(b) and _normal(got)
    union = a.union(b)
    assert _rows(union) == want_a | _rows(b) and _normal(union)
    assert a.count == len(want_a)
    probes = np.array(sorted(rng.randint(0, span + 12) for _ in range(8)), dtype=np.int64)
    assert a.contains(probes).tolist() == [int(x) in want_a for x in probes]
    assert a.rows_before(probes).tolist() == [sum(1 for y in want_a if y < x) for x in probes]
    lo = np.array([rng.randint(0, span) for _ in range(5)], dtype=np.int64)
    hi = lo + np.array([rng.randint(0, 10) for _ in range(5)], dtype=np.int64)
    assert a.count_within(lo, hi).tolist() == [
        sum(1 for y in want_a if s <= y < e) for s, e in zip(lo.tolist(), hi.tolist())]
    ordered = sorted(want_a)
    if ordered:
        pos = np.array(sorted(rng.sample(range(len(ordered)), min(4, len(ordered)))), np.int64)
        assert a.ids_at(pos).tolist() == [ordered[p] for p in pos.tolist()]


@pytest.mark.parametrize("seed", range(100))
def test_of_sorted_merges_adjacent_pages(seed):
    rng = random.Random(seed)
    bounds = np.cumsum([0] + [rng.randint(1, 5) for _ in range(rng.randint(1, 9))])
    starts, ends = bounds[:-1], bounds[1:]
    keep = np.array([rng.random() < 0.6 for _ in starts], dtype=bool)
    got = RowRanges.of_sorted(starts[keep], ends[keep])
    assert _rows(got) == _rows(RowRanges.of(starts[keep], ends[keep])) and \
        (got.is_empty or _normal(got))
    assert got.starts.dtype == np.int64 and got.ends.dtype == np.int64
