"""Runtime filters: the build side's join keys narrow the probe side's scan, as Doris's RFs do.

For an inner, left semi or right semi/anti hash join, the build (right) side runs first; the
distinct values of each build key become a storage predicate on the probe scan column the left
key comes from:
`col IN (values)` when there are few (at most `MAX_IN_VALUES`, Doris's runtime_filter_max_in_num),
else `col >= min AND col <= max`, plus, where Doris adds a bloom filter, the exact set as
`col IN (values)` for integer keys when it is selective (`SET_DENSITY`) and not huge
(`MAX_SET_VALUES`); a build side of more than `MAX_DISTINCT_BUILD` rows gives min/max only.
Values go to storage as an Arrow array (storage/value_set.py: a lookup
table built once per scan). Storage uses them like any predicate (short key ranges, zone maps,
bloom filters, then the rows), so a selective dimension filter skips fact pages and rows
instead of joining every fact row (TPC-H Q5: lineitem rows for the orders of one year only).
A filter on a RANGE table's first partition column also drops the partitions its [min, max]
cannot meet (Doris's runtime filter partition pruning; planner/prune_partitions.py): SSB's
date join reads one year's 48 tablets of Doris's 7 x 48 lineorder, not 336.

`planner.runtime_filters.trace_scan_column` finds the scan column a probe key reads (the same
function gives EXPLAIN its `runtime filters:` lines); a key computed by an expression gets none.
"""

from __future__ import annotations

import dataclasses

import pyarrow as pa
import pyarrow.compute as pc

from planner import logical as L
from planner.prune_partitions import runtime_survivors
from planner.runtime_filters import FILTERABLE_JOINS, trace_scan_column
from storage import ColumnPredicate
from storage.value_set import MAX_LOOKUP_SPAN, distinct_sorted

MAX_IN_VALUES = 1024
# The exact set's bound grows with the data: SSB's customers of one region are 60k keys at SF 1
# and 300k at SF 10, parts of two manufacturers 80k and 800k (2.4M at SF 30). With a bound of
# 2^18 the SF 10 probe scans lost their customer and part filters and Q3.1 / Q4.1 grew 17x / 13x
# from SF 1; now the bound is the build size that still gets a set at all. Storage checks a set
# by a lookup table over [min, max] when that span is at most MAX_LOOKUP_SPAN (16M), else by a
# binary search per row, which only a set of up to MAX_SEARCH_VALUES keeps cheap enough (a
# million-key set over a span of 60M, TPC-H SF 10's orders of one year, would cost each lineitem
# row ~20 cache misses); indexes probe only sets of up to MAX_PROBE_VALUES values.
MAX_SET_VALUES = 1 << 22
MAX_SEARCH_VALUES = 1 << 18
MAX_DISTINCT_BUILD = 1 << 22  # build rows beyond which only min/max is taken
SET_DENSITY = 2  # the exact set only when it holds at most 1/2 of the integers in [min, max]


def _predicates(column: str, values: pa.ChunkedArray) -> list[ColumnPredicate]:
    if pa.types.is_nested(values.type) or isinstance(values.type, pa.BaseExtensionType):
        return []  # ARRAY keys join on their text (operators/join.py); JSON, MAP: refused there
    if len(values) > MAX_DISTINCT_BUILD:
        # Sorting a huge build side's keys costs more than a set could save: min/max only.
        bounds = pc.min_max(values)
        low, high = bounds["min"].as_py(), bounds["max"].as_py()
        if low is None:
            return [ColumnPredicate(column, "in", ())]
        return [ColumnPredicate(column, ">=", (low,)), ColumnPredicate(column, "<=", (high,))]
    distinct = distinct_sorted(values)
    if len(distinct) == 0:
        return [ColumnPredicate(column, "in", ())]
    if len(distinct) <= MAX_IN_VALUES:
        return [ColumnPredicate(column, "in", array=distinct)]
    low, high = distinct[0].as_py(), distinct[-1].as_py()
    out = [ColumnPredicate(column, ">=", (low,)), ColumnPredicate(column, "<=", (high,))]
    if not pa.types.is_integer(distinct.type):
        return out
    span = high - low + 1
    if SET_DENSITY * len(distinct) <= span and \
            len(distinct) <= (MAX_SET_VALUES if span <= MAX_LOOKUP_SPAN else MAX_SEARCH_VALUES):
        out.append(ColumnPredicate(column, "in", array=distinct))
    return out


def _density(p: ColumnPredicate) -> float:
    """The fraction of [min, max] an integer key set holds (inf: not such a set)."""
    if p.array is None or not len(p.array) or not pa.types.is_integer(p.array.type):
        return float("inf")
    return len(p.array) / (p.array[-1].as_py() - p.array[0].as_py() + 1)


def _rebuild(path: list, predicates: list[ColumnPredicate]) -> object:
    """A copy of the path's top node with the scan at its bottom given extra predicates.
    Key sets are kept sparsest first: storage evaluates set lookups in list order, each later
    one on the survivors only (SSB Q2.1: the 4 % of parts before the 20 % of suppliers)."""
    *nodes, scan, _ = path
    merged = list(scan.predicates) + predicates
    sets = sorted((p for p in merged if _density(p) != float("inf")), key=_density)
    merged = [p for p in merged if _density(p) == float("inf")] + sets
    node = dataclasses.replace(scan, predicates=merged)
    keep = runtime_survivors(scan, predicates)
    if keep is not None:  # Doris's runtime filter partition pruning
        node.tablets = [t for t in scan.tablets if t.partition_id in keep]
        node.range_bounds = tuple(b for b in scan.range_bounds if b[0] in keep)
    children = nodes[1:] + [scan]
    for parent, child in zip(reversed(nodes), reversed(children)):
        if isinstance(parent, L.Join):
            attr = "left" if parent.left is child else "right"
        else:
            attr = "input"
        node = dataclasses.replace(parent, **{attr: node})
    return node


def apply_runtime_filters(join: L.Join, right: pa.Table) -> object:
    """The join's left input with runtime filters from the executed right side."""
    left = join.left
    if join.kind not in FILTERABLE_JOINS:
        return left
    for lk, rk in zip(join.left_keys, join.right_keys):
        path = trace_scan_column(left, lk)
        if path is None:
            continue
        column_type = path[-2].column_types[path[-1]]
        if column_type.is_float:
            continue
        values = right.column(rk)
        if pa.types.is_string(values.type) != pa.types.is_string(column_type.arrow()):
            continue  # text against numbers compares as numbers ('05' = 5): no IN of texts
        if values.type != column_type.arrow():
            try:
                values = values.cast(column_type.arrow())
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                continue
        left = _rebuild(path, _predicates(path[-1], values))
    return left
