"""Table statistics for planning: rows and average row size from the published rowsets, and the
row estimates that join ordering builds on them (`estimate_rows`, `selectivity`).

The catalog journals every published rowset with its row count and data size; summing them over
the tablets a scan reads gives its cardinality and bytes without touching storage. For
Aggregate/Unique tables rows from different loads are counted before merging: an upper bound,
which is what a cost model wants.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from sqlglot import exp

from catalog.model import OlapTable, Partition
from planner import logical as L


@dataclass
class ScanStatistics:
    rows: int
    data_size: int
    tablets_total: int
    tablets_with_data: int
    partitions_with_data: int
    backends: int

    @property
    def avg_row_size(self) -> float:
        return self.data_size / self.rows if self.rows else 0.0


def _partition_rows(p: Partition, tablet_ids: list[int]) -> tuple[int, int, int, set[int]]:
    rows = size = with_data = 0
    backends: set[int] = set()
    for tid in tablet_ids:
        meta = p.tablets[tid]
        t_rows = sum(r["meta"]["num_rows"] for r in meta.rowsets if r["version"] <= p.visible_version)
        t_size = sum(r["meta"]["data_size"] for r in meta.rowsets if r["version"] <= p.visible_version)
        rows += t_rows
        size += t_size
        if t_rows:
            with_data += 1
            backends.add(meta.replicas[0])
    return rows, size, with_data, backends


# Within `memoized()` (one statement's planning) each (table, partitions, index) is summed once:
# join ordering and the fragment builder ask for the same scans again and again, and each ask
# walks every tablet's rowsets (hundreds of tablets with Doris's tooling DDL). Given the
# catalog's data epoch (Catalog.data_epoch: bumped by every applied journal entry, loads and
# compactions included), the sums are also kept for later statements planned at the same
# epoch: a read-only workload sums each scan once, not once per statement.
_MEMO: ContextVar[dict | None] = ContextVar("scan_statistics_memo", default=None)
_SHARED: tuple[int, dict] = (-1, {})  # (data epoch, memo) shared across statements
_SHARED_LOCK = threading.Lock()
SHARED_ENTRIES = 4096  # scans kept per epoch (then the memo starts again)


@contextmanager
def memoized(epoch: int | None = None):
    global _SHARED
    memo: dict = {}
    if epoch is not None:
        with _SHARED_LOCK:
            if _SHARED[0] == epoch and len(_SHARED[1]) < SHARED_ENTRIES:
                memo = _SHARED[1]
            else:
                _SHARED = (epoch, memo)
    token = _MEMO.set(memo)
    try:
        yield
    finally:
        _MEMO.reset(token)


def scan_statistics(table: OlapTable, partition_ids: list[int], index_id: int) -> ScanStatistics:
    """Statistics of reading `index_id` of the given partitions (call under the catalog lock)."""
    memo = _MEMO.get()
    if memo is None:
        return _scan_statistics(table, partition_ids, index_id)
    key = (table.table_id, tuple(partition_ids), index_id)
    found = memo.get(key)
    if found is None:
        found = memo[key] = _scan_statistics(table, partition_ids, index_id)
    return found


def _scan_statistics(table: OlapTable, partition_ids: list[int], index_id: int) -> ScanStatistics:
    rows = size = total = with_data = parts = 0
    backends: set[int] = set()
    for pid in partition_ids:
        p = table.find_partition(pid)
        if p is None:
            continue  # replaced since the statement captured it (INSERT OVERWRITE, TRUNCATE)
        tablet_ids = p.tablets_by_index.get(index_id, [])
        r, s, w, b = _partition_rows(p, tablet_ids)
        rows, size, with_data = rows + r, size + s, with_data + w
        total += len(tablet_ids)
        parts += 1 if r else 0
        backends |= b
    return ScanStatistics(rows, size, total, with_data, parts, len(backends))


# -- estimates for join ordering ---------------------------------------------------------------
# Default selectivities without column statistics, Doris Nereids' (FilterEstimation): equality
# 0.1, a range bound 0.5 (so BETWEEN 0.25), IN 1/3 (k values: at most the OR of k equalities),
# LIKE 0.2, IS NULL 0.005, a HAVING condition
# 0.01; inequality 0.9; AND multiplies, OR adds (1 - (1 - a)(1 - b)), NOT complements.
_RANGE = (exp.GT, exp.GTE, exp.LT, exp.LTE)
_DEFAULTS = {exp.EQ: 0.1, exp.NEQ: 0.9, exp.In: 1 / 3, exp.Between: 0.25, exp.Is: 0.005,
             exp.Like: 0.2, exp.ILike: 0.2, **{t: 0.5 for t in _RANGE}}
HAVING_SELECTIVITY = 0.01


def selectivity(e: exp.Expression, ndv=None) -> float:
    """The fraction of rows a condition keeps, by its shape; with `ndv(column)` (an analysed
    column's distinct values, ANALYZE TABLE) `col = const` keeps 1/ndv, `col IN (k values)`
    k/ndv."""
    if isinstance(e, exp.Paren):
        return selectivity(e.this, ndv)
    if isinstance(e, exp.And):
        return selectivity(e.this, ndv) * selectivity(e.expression, ndv)
    if isinstance(e, exp.Or):
        a, b = selectivity(e.this, ndv), selectivity(e.expression, ndv)
        return 1 - (1 - a) * (1 - b)
    if isinstance(e, exp.Not):
        return 1 - selectivity(e.this, ndv)
    known = _analysed(e, ndv) if ndv is not None else None
    if known is not None:
        return known
    if isinstance(e, exp.In) and not e.args.get("query") and e.expressions:
        # k values: as the OR of k equalities it stands for (planner/or_to_in.py), at most IN's
        return min(_DEFAULTS[exp.In], 1 - (1 - _DEFAULTS[exp.EQ]) ** len(e.expressions))
    return _DEFAULTS.get(type(e), 0.5)


def _analysed(e: exp.Expression, ndv) -> float | None:
    if isinstance(e, exp.EQ):
        col = e.this if isinstance(e.this, exp.Column) else e.expression
        other = e.expression if col is e.this else e.this
        if isinstance(col, exp.Column) and isinstance(other, exp.Literal):
            n = ndv(col.name)
            return 1.0 / n if n else None
    if isinstance(e, exp.In) and isinstance(e.this, exp.Column) and not e.args.get("query"):
        n = ndv(e.this.name)
        return min(1.0, len(e.expressions) / n) if n else None
    return None


def scan_ndv(plan: object, catalog):
    """ndv(internal column name) over the analysed columns of the scan under `plan` (through
    filters), or None when the table has no statistics."""
    while isinstance(plan, L.Filter):
        plan = plan.input
    if not isinstance(plan, L.OlapScan):
        return None
    with catalog.lock:
        table = catalog.get_table(plan.db or None, plan.table)
        stats = getattr(catalog, "column_stats", {}).get(str(table.table_id))
    if not stats:
        return None
    by_output = dict(zip(plan.output, plan.columns))

    def ndv(name: str) -> float | None:
        s = stats["columns"].get(by_output.get(name, ""))
        return float(s["ndv"]) if s and s.get("ndv") else None
    return ndv


def estimate_rows(plan: object, catalog, filtered: bool = True) -> float:
    """Estimated output rows of a logical plan: scans' published rows, filters' selectivity
    (ignored when not `filtered`: the rows the plan's keys are drawn from), aggregations keep a
    tenth (one row without GROUP BY), joins as their probe side, semi joins that side times
    `semi_selectivity`, anti joins half of it, LIMIT its count."""
    if isinstance(plan, L.OlapScan):
        with catalog.lock:
            table = catalog.get_table(plan.db or None, plan.table)
            part_ids = sorted({t.partition_id for t in plan.tablets})
            return float(scan_statistics(table, part_ids, table.base_index_id).rows)
    if isinstance(plan, L.InlineTable):
        return float(plan.table.num_rows)
    if isinstance(plan, L.OneRow):
        return 1.0
    if isinstance(plan, L.Filter):
        rows = estimate_rows(plan.input, catalog, filtered)
        if not filtered:
            return rows
        having = isinstance(plan.input, L.Aggregate) and plan.input.group_names
        return rows * (HAVING_SELECTIVITY if having else
                       selectivity(plan.condition, scan_ndv(plan.input, catalog)))
    if isinstance(plan, L.Aggregate):
        return 1.0 if not plan.group_names and not plan.grouping_sets \
            else estimate_rows(plan.input, catalog, filtered) * 0.1
    if isinstance(plan, L.Limit):
        rows = estimate_rows(plan.input, catalog, filtered)
        return min(rows, float(plan.limit)) if plan.limit is not None else rows
    if isinstance(plan, L.Join):
        probe, other = (plan.right, plan.left) if plan.kind.startswith("right ") \
            else (plan.left, plan.right)
        rows = estimate_rows(probe, catalog, filtered)
        if plan.kind == "cross":
            return rows * estimate_rows(other, catalog, filtered)
        if "semi" in plan.kind and filtered:
            return rows * semi_selectivity(other, catalog)
        return rows * (0.5 if "anti" in plan.kind and filtered else 1.0)
    for attr in ("input", "left"):
        child = getattr(plan, attr, None)
        if child is not None:
            return estimate_rows(child, catalog, filtered)
    return 1000.0


def semi_selectivity(subquery: object, catalog) -> float:
    """The fraction of rows a semi join against `subquery` keeps: the fraction of the rows its
    keys are drawn from that its filters keep (`x IN (SELECT key FROM t WHERE f)` keeps
    about selectivity(f) of the rows whose x is a key of t)."""
    rows = estimate_rows(subquery, catalog)
    domain = estimate_rows(subquery, catalog, filtered=False)
    return min(1.0, max(rows / max(domain, 1.0), 0.001))
