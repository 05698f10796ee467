"""Row ranges: sets of row ids of one segment as sorted, disjoint [start, end) intervals.

Owns the algebra the read path uses to combine index results (Doris `RowRanges`): the short key
index yields key ranges, each zone-map-filtered column yields the ranges of its kept pages, and
the rows to decode are their intersection. All operations are numpy sweeps over interval
boundaries, never over rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class RowRanges:
    starts: np.ndarray  # int64, sorted, disjoint, non-adjacent, non-empty intervals
    ends: np.ndarray

    @staticmethod
    def full(num_rows: int) -> RowRanges:
        if num_rows <= 0:
            return RowRanges.empty()
        return RowRanges(np.zeros(1, np.int64), np.full(1, num_rows, np.int64))

    @staticmethod
    def empty() -> RowRanges:
        return RowRanges(np.zeros(0, np.int64), np.zeros(0, np.int64))

    @staticmethod
    def of(starts, ends) -> RowRanges:
        """Normalize arbitrary intervals: drop empty ones, sort, merge overlapping/adjacent."""
        starts = np.asarray(starts, dtype=np.int64)
        ends = np.asarray(ends, dtype=np.int64)
        keep = ends > starts
        starts, ends = starts[keep], ends[keep]
        if len(starts) == 0:
            return RowRanges.empty()
        order = np.argsort(starts, kind="stable")
        starts, ends = starts[order], ends[order]
        reach = np.maximum.accumulate(ends)
        first = np.ones(len(starts), dtype=bool)
        first[1:] = starts[1:] > reach[:-1]
        groups = np.flatnonzero(first)
        return RowRanges(starts[groups], np.maximum.reduceat(ends, groups))

    @staticmethod
    def of_sorted(starts: np.ndarray, ends: np.ndarray) -> RowRanges:
        """`of` for intervals already sorted, disjoint and non-empty (a column's pages):
        adjacent ones merged, no sort."""
        if len(starts) <= 1:
            return RowRanges(np.asarray(starts, np.int64), np.asarray(ends, np.int64))
        first = np.ones(len(starts), dtype=bool)
        first[1:] = starts[1:] != ends[:-1]
        if first.all():
            return RowRanges(np.asarray(starts, np.int64), np.asarray(ends, np.int64))
        last = np.ones(len(starts), dtype=bool)
        last[:-1] = first[1:]
        return RowRanges(np.asarray(starts[first], np.int64), np.asarray(ends[last], np.int64))

    @property
    def count(self) -> int:
        n = len(self.starts)
        if n <= 1:
            return int(self.ends[0]) - int(self.starts[0]) if n else 0
        return int((self.ends - self.starts).sum())

    def __len__(self) -> int:
        return len(self.starts)

    @property
    def is_empty(self) -> bool:
        return len(self.starts) == 0

    def union(self, other: RowRanges) -> RowRanges:
        return RowRanges.of(np.concatenate([self.starts, other.starts]),
                            np.concatenate([self.ends, other.ends]))

    def intersect(self, other: RowRanges) -> RowRanges:
        """Rows in both: sweep the boundaries and keep where both sets cover."""
        if self.is_empty or other.is_empty:
            return RowRanges.empty()
        if len(self) == 1 and self.starts[0] <= other.starts[0] and \
                self.ends[0] >= other.ends[-1]:
            return other  # one range spanning the other (often the whole segment)
        if len(other) == 1 and other.starts[0] <= self.starts[0] and \
                other.ends[0] >= self.ends[-1]:
            return self
        points = np.concatenate([self.starts, other.starts, self.ends, other.ends])
        deltas = np.concatenate([np.ones(len(self) + len(other), np.int64),
                                 -np.ones(len(self) + len(other), np.int64)])
        order = np.lexsort((deltas, points))  # at equal points, ends (-1) before starts
        points, coverage = points[order], np.cumsum(deltas[order])
        both = np.flatnonzero(coverage[:-1] == 2)
        return RowRanges.of(points[both], points[both + 1])

    def rows_before(self, x: np.ndarray) -> np.ndarray:
        """How many rows of the set are < each x (int64 array)."""
        x = np.asarray(x, dtype=np.int64)
        if self.is_empty:
            return np.zeros(len(x), np.int64)
        lengths = self.ends - self.starts
        before = np.concatenate([[0], np.cumsum(lengths)])
        j = np.searchsorted(self.starts, x, side="right")  # ranges starting at or before x
        prev = np.maximum(j - 1, 0)
        inside = np.where(j > 0, np.clip(x - self.starts[prev], 0, lengths[prev]), 0)
        return before[prev] + inside

    def count_within(self, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """Rows of the set inside each interval [starts[i], ends[i])."""
        if len(self.starts) == 1:  # one range (often the whole segment): overlap lengths
            lo, hi = int(self.starts[0]), int(self.ends[0])
            return np.maximum(np.minimum(ends, hi) - np.maximum(starts, lo), 0)
        return self.rows_before(ends) - self.rows_before(starts)

    def contains(self, rows: np.ndarray) -> np.ndarray:
        """bool mask: which of the (int64) row ids belong to the set."""
        if self.is_empty:
            return np.zeros(len(rows), dtype=bool)
        j = np.searchsorted(self.starts, rows, side="right") - 1
        return (j >= 0) & (rows < self.ends[np.maximum(j, 0)])

    def ids_at(self, positions: np.ndarray) -> np.ndarray:
        """The row ids at the given (ascending) positions of `to_indices()`, without building
        it."""
        if len(self.starts) == 1:
            return positions + self.starts[0]
        lengths = self.ends - self.starts
        before = np.cumsum(lengths) - lengths
        k = np.searchsorted(before, positions, side="right") - 1
        return positions - before[k] + self.starts[k]

    def to_indices(self) -> np.ndarray:
        """Every row id, ascending (int64)."""
        lengths = self.ends - self.starts
        total = int(lengths.sum())
        if total == 0:
            return np.zeros(0, np.int64)
        shift = self.starts - (np.cumsum(lengths) - lengths)
        return np.repeat(shift, lengths) + np.arange(total, dtype=np.int64)
