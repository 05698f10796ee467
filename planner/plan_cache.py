"""Bound plans kept for the next run of the same query text.

Binding a query (names, types, subqueries, join order and distribution, pushdown, pruning,
rollup selection) is Python that costs 2-7 ms for an SSB or TPC-H query, 6-27 % of its time at
SF 1, and a third of the server's time for a small dashboard query such as `SELECT g, count(*),
sum(v) FROM t GROUP BY g` (issue 14 items 2, 4 and 6; issue 19). The plan keeps what binding
decided; each run captures its own snapshots.

    Template.of(plan)        a copy of a bound plan to keep (its nodes copied, its scans'
                             tablets, pruned when bound, without snapshots), or None when the
                             plan holds rows computed while binding (information_schema)
    template.instantiate(ctx)
                             a plan to run: the nodes copied again, every scan's tablets captured
                             at their partitions' visible versions now (into ctx.snapshots);
                             PlanStale when a tablet or partition went, or when a plan with joins
                             finds a table's rows changed by more than ROWS_DRIFT since it was
                             bound (its join order and distribution came from those counts)

What the plan depends on besides the text is the caller's key and check: the current database,
the user, the session's variables and the catalog's `ddl_epoch` (schema, partition, index,
view, function, privilege and property changes move it; loads and compactions do not). Loads
change only the versions, which `instantiate` captures afresh. In a plan without joins the
counts decide nothing but which of several rollups that all answer the query is cheapest.
Expressions are shared between runs: the executor never changes a plan's nodes or expressions
(runtime filters make new nodes; a scan's memo of its page indexes is made per run, on the run's
copy).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from planner import logical as L
from planner.binder import BindContext, PlanStale, capture_snapshots
from storage.scan_unit import snapshot_rows

ROWS_DRIFT = 2.0  # a joined table grown or shrunk by this factor is planned again
_CHILDREN = ("input", "left", "right")


def _scans(plan: object, out: list) -> list:
    if isinstance(plan, L.OlapScan):
        out.append(plan)
    for attr in _CHILDREN:
        child = getattr(plan, attr, None)
        if child is not None:
            _scans(child, out)
    return out


def _copy(plan: object, scan_copy) -> object:
    """`plan` with every node copied (expressions shared), scans by `scan_copy`."""
    if isinstance(plan, L.OlapScan):
        return scan_copy(plan)
    node = copy.copy(plan)
    for attr in _CHILDREN:
        child = getattr(node, attr, None)
        if child is not None:
            setattr(node, attr, _copy(child, scan_copy))
    return node


def _bare(scan: L.OlapScan) -> L.OlapScan:
    """The scan without its snapshots (and without a run's memo)."""
    bare = copy.copy(scan)
    bare.__dict__.pop("_page_indexes", None)
    bare.tablets = [L.ScanTablet(t.tablet_id, 0, t.partition_id, t.backend_id, t.bucket)
                    for t in scan.tablets]
    return bare


def _has_inline_rows(plan: object) -> bool:
    if isinstance(plan, L.InlineTable):
        return True
    return any(_has_inline_rows(getattr(plan, a)) for a in _CHILDREN
               if getattr(plan, a, None) is not None)


def _rows(scan: L.OlapScan) -> int:
    return sum(snapshot_rows(t.snapshot) for t in scan.tablets if t.snapshot is not None)


@dataclass
class Template:
    plan: object
    rows: list[int] | None  # each scan's rows when bound (plans with joins), else None
    data_epoch: int  # the catalog's when bound: while it stays, no table's rows changed
    tablets: int = 0  # the scans' tablets (what keeping the template costs)

    @staticmethod
    def of(plan: object, data_epoch: int) -> "Template | None":
        if _has_inline_rows(plan):
            return None
        scans = _scans(plan, [])
        rows = [_rows(s) for s in scans] if len(scans) > 1 else None
        return Template(_copy(plan, _bare), rows, data_epoch, sum(len(s.tablets) for s in scans))

    def instantiate(self, ctx: BindContext) -> object:
        def captured(scan: L.OlapScan) -> L.OlapScan:
            run = copy.copy(scan)
            run.tablets = list(scan.tablets)
            capture_snapshots(run, ctx)  # into ctx.snapshots, which the caller releases
            return run

        plan = _copy(self.plan, captured)
        if self.rows is not None and ctx.catalog.data_epoch != self.data_epoch:
            for scan, bound in zip(_scans(plan, []), self.rows):
                now = _rows(scan)
                if (now == 0) != (bound == 0) or \
                        not bound / ROWS_DRIFT <= now <= bound * ROWS_DRIFT:
                    raise PlanStale(f"{scan.table} has {now} rows, {bound} when planned")
        return plan
