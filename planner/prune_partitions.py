"""Rule: partition pruning. A scan keeps only the tablets of partitions that can hold rows
satisfying its pushed-down predicates on partition columns (`=`, `IN`, `<`, `<=`, `>`, `>=`,
`BETWEEN` as two bounds, `IS [NOT] NULL`), as Doris's PartitionPruner does; the WHERE filter
above the scan stays, so pruning only has to be safe, never exact.

- RANGE: the predicates on the first partition column become a value set (points, or an
  interval, and whether NULL may match); a partition `[lower, upper)` survives if that set meets
  the values its first column can take: `[lower0, upper0)` on one column, `[lower0, upper0]`
  (conservatively) on several. NULL sorts first: only a partition starting at MIN holds it.
- LIST: a partition survives if one of its value tuples satisfies the predicates of every
  partition column (a NULL in the list matches only IS NULL).

Runs per scan once WHERE conjuncts are storage predicates (`planner.pushdown`), before bucket
pruning; sets `OlapScan.tablets` and `OlapScan.partitions_selected` (EXPLAIN's `partitions=k/n`
is rendered from them).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta

import pyarrow.compute as pc

from catalog.model import OlapTable, Partition
from catalog.values import parse_value
from planner import logical as L
from storage.types import DataType

_UNBOUNDED = None


@dataclass
class ValueSet:
    """The values of one column that the scan's predicates allow (an over-approximation)."""

    points: frozenset | None = None         # None: not limited to points
    lo: tuple[object, bool] | None = None   # (value, inclusive)
    hi: tuple[object, bool] | None = None
    null: bool = True                       # may NULL match?
    non_null: bool = True                   # may a non-NULL value match?

    def add(self, op: str, values: tuple) -> None:
        if op == "is_null":
            self.non_null = False
        elif op == "is_not_null":
            self.null = False
        elif op in ("=", "in"):
            self.null = False
            points = frozenset(v for v in values if v is not None)
            self.points = points if self.points is None else self.points & points
        elif op in ("<", "<=", ">", ">="):
            self.null = False
            bound = _discrete((values[0], op in ("<=", ">=")), 1 if op[0] == ">" else -1)
            if op[0] == "<":
                self.hi = bound if self.hi is None else min(self.hi, bound, key=_hi_key)
            else:
                self.lo = bound if self.lo is None else max(self.lo, bound, key=_lo_key)

    def admits(self, value: object) -> bool:
        if value is None:
            return self.null
        if not self.non_null or (self.points is not None and value not in self.points):
            return False
        return _above(value, self.lo) and _below(value, self.hi)

    def meets(self, lower: object, upper: tuple[object, bool] | None, holds_null: bool) -> bool:
        """Does a partition whose column takes [lower, upper) (upper: (value, inclusive) or
        None for MAX; lower None for MIN) hold an admitted value?"""
        if holds_null and self.null:
            return True
        if not self.non_null:
            return False
        low = (lower, True) if lower is not None else None
        if self.points is not None:
            return any(_above(v, low) and _below(v, upper) and self.admits(v) for v in self.points)
        lo = max((b for b in (low, self.lo) if b is not None), key=_lo_key, default=None)
        hi = min((b for b in (upper, self.hi) if b is not None), key=_hi_key, default=None)
        if lo is None or hi is None:
            return True
        return lo[0] < hi[0] or (lo[0] == hi[0] and lo[1] and hi[1])


def _discrete(bound: tuple[object, bool], step: int) -> tuple[object, bool]:
    """An exclusive bound on integers or dates as the inclusive one next to it (`k > 29` is
    `k >= 30`), so [20, 30) is pruned for it; other types keep the exclusive bound."""
    value, inclusive = bound
    if inclusive:
        return bound
    if isinstance(value, int) and not isinstance(value, bool):
        return value + step, True
    if isinstance(value, date) and not isinstance(value, datetime):
        try:
            return value + timedelta(days=step), True
        except OverflowError:  # past 9999-12-31 or before 0001-01-01: nothing, kept exclusive
            return bound
    return bound


def _lo_key(b: tuple[object, bool]) -> tuple:
    return b[0], not b[1]      # a larger value, or exclusive, is tighter


def _hi_key(b: tuple[object, bool]) -> tuple:
    return b[0], b[1]          # a smaller value, or exclusive, is tighter


def _above(v: object, lo: tuple[object, bool] | None) -> bool:
    return lo is None or v > lo[0] or (lo[1] and v == lo[0])


def _below(v: object, hi: tuple[object, bool] | None) -> bool:
    return hi is None or v < hi[0] or (hi[1] and v == hi[0])


def value_sets(scan: L.OlapScan, columns: list[str]) -> dict[str, ValueSet]:
    """The value set of each partition column that has predicates."""
    wanted = {c.lower(): c for c in columns}
    sets: dict[str, ValueSet] = {}
    for p in scan.predicates:
        name = wanted.get(p.column.lower())
        if name is not None:
            sets.setdefault(name, ValueSet()).add(p.op, p.values)
    return sets


def _range_survives(p: Partition, t: DataType, many: bool, vs: ValueSet) -> bool:
    lower, upper, holds_null = _bounds(p, t, many)
    return vs.meets(lower, upper, holds_null)


def _bounds(p: Partition, t: DataType, many: bool) -> tuple:
    """(lower, upper, holds NULL) of a RANGE partition on its first column (`ValueSet.meets`)."""
    lower = parse_value(t, p.lower[0]) if p.lower and p.lower[0] is not None else None
    if p.upper and p.upper[0] is not None:
        exclusive_upper = not many or len(p.upper) == 1
        upper = (parse_value(t, p.upper[0]), not exclusive_upper)
    else:
        upper = _UNBOUNDED
    return lower, upper, not p.lower


def _list_survives(p: Partition, types: list[DataType], sets: list[ValueSet | None]) -> bool:
    for tup in p.values or []:
        if all(vs is None or vs.admits(None if v is None else parse_value(t, v))
               for v, t, vs in zip(tup, types, sets)):
            return True
    return False


def surviving_partitions(table: OlapTable, scan: L.OlapScan) -> set[int]:
    """Ids of the table's partitions the scan's predicates cannot rule out."""
    info = table.partition_info
    everything = set(table.partitions)
    if info.kind not in ("RANGE", "LIST"):
        return everything
    sets = value_sets(scan, info.columns)
    types = [table.column(c).type for c in info.columns]
    if info.kind == "RANGE":
        first = sets.get(info.columns[0])
        if first is None:
            return everything
        many = len(info.columns) > 1
        return {pid for pid, p in table.partitions.items()
                if _range_survives(p, types[0], many, first)}
    per_column = [sets.get(c) for c in info.columns]
    if all(vs is None for vs in per_column):
        return everything
    return {pid for pid, p in table.partitions.items() if _list_survives(p, types, per_column)}


def prune_partitions(scan: L.OlapScan, table: OlapTable) -> None:
    """Drop the tablets of pruned partitions from `scan` (caller holds the catalog lock), and
    give it the selected partitions' bounds for runtime filters (`range_bounds`)."""
    try:
        keep = surviving_partitions(table, scan)
    except TypeError:  # a predicate value that does not compare with the bounds: keep all
        return
    # A partition dropped since the scan was bound is gone with its tablets: not read.
    # Temporary partitions (named in FROM) are kept: they are not pruned by range.
    keep |= set(table.temp_partitions)
    scan.tablets = [t for t in scan.tablets if t.partition_id in keep]
    scan.partitions_selected = len({t.partition_id for t in scan.tablets})
    scan.range_column, scan.range_bounds = range_bounds(
        table, {t.partition_id for t in scan.tablets})


def range_bounds(table: OlapTable, partition_ids: set[int]) -> tuple[str, tuple]:
    """(first partition column, ((partition id, lower, upper, holds NULL), ...)) of a RANGE
    table's partitions among `partition_ids`, bounds as `ValueSet.meets` takes them; ("", ())
    when the table is not RANGE partitioned or a partition is not a plain one (temporary)."""
    info = table.partition_info
    if info.kind != "RANGE" or not info.columns:
        return "", ()
    t = table.column(info.columns[0]).type
    many = len(info.columns) > 1
    out = []
    for pid in sorted(partition_ids):
        p = table.partitions.get(pid)
        if p is None:
            return "", ()
        out.append((pid, *_bounds(p, t, many)))
    return info.columns[0], tuple(out)


def _min_max(p) -> tuple:
    if p.array is not None:
        found = pc.min_max(p.array)
        return found["min"].as_py(), found["max"].as_py()
    values = [v for v in p.values if v is not None]
    try:
        return (min(values), max(values)) if values else (None, None)
    except TypeError:
        return None, None


def runtime_survivors(scan: L.OlapScan, predicates: list) -> set[int] | None:
    """The partitions among the scan's `range_bounds` that `predicates` (a runtime filter's,
    on the partition column) leave, or None when they prune nothing."""
    if not scan.range_bounds:
        return None
    vs = ValueSet()
    wanted = scan.range_column.lower()
    for p in predicates:
        if p.column.lower() != wanted:
            continue
        if p.op in ("<", "<=", ">", ">="):
            vs.add(p.op, p.values)
        elif p.op == "in":  # its [min, max]: partitions are ranges
            low, high = _min_max(p)
            if low is not None:
                vs.add(">=", (low,))
                vs.add("<=", (high,))
    if vs.lo is None and vs.hi is None:
        return None
    try:
        keep = {pid for pid, lower, upper, null in scan.range_bounds
                if vs.meets(lower, upper, null)}
    except TypeError:  # a value that does not compare with the bounds
        return None
    return keep if len(keep) < len(scan.range_bounds) else None
