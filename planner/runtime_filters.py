"""Which scan column a join's probe key reads: the target of a runtime filter.

Doris builds runtime filters (RF) from a hash join's build side and applies them to the probe
side's scan. `trace_scan_column` follows a probe key down through filters, column projections,
renames and joins to the OlapScan column it comes from; the planner prints the filters in
EXPLAIN and the executor (`executor/runtime_filter.py`) applies them.

Through a join, the key is followed into the side that produces it, where dropping rows whose
key the filter rejects cannot change what the join above keeps: either side of an inner join
(the build side of a lower join runs only when that join runs, after the filter is known, so
a bushy build side gets filtered too), the preserved left side of a left outer, semi or anti
join, and the right side of a right semi or anti join (whose output it is).

Through an aggregation, a grouping key is followed into its input.

A right semi / anti join is filterable itself: a left row whose key is not among the right
side's keys matches no right row, so it changes neither which right rows match nor which do not.
"""

from __future__ import annotations

from sqlglot import exp

from planner import logical as L

FILTERABLE_JOINS = ("inner", "left semi", "right semi", "right anti")
_THROUGH = {"inner": ("left", "right"), "left semi": ("left",), "left anti": ("left",),
            "left outer": ("left",), "right semi": ("right",), "right anti": ("right",)}


def trace_scan_column(node: object, name: str) -> list[tuple[object, ...]] | None:
    """The path of nodes from `node` down to the OlapScan that produces column `name`, with
    the scan's column name at the end: [node, ..., scan, column]."""
    if isinstance(node, L.OlapScan):
        return [node, node.columns[node.output.index(name)]] if name in node.output else None
    if isinstance(node, L.Filter):
        rest = trace_scan_column(node.input, name)
        return [node] + rest if rest else None
    if isinstance(node, L.Project):
        for e, out in zip(node.exprs, node.names):
            if out == name and isinstance(e, exp.Column):
                rest = trace_scan_column(node.input, e.name)
                return [node] + rest if rest else None
        return None
    if isinstance(node, L.Rename):
        if name in node.aliases:
            rest = trace_scan_column(node.input, node.names[node.aliases.index(name)])
            return [node] + rest if rest else None
        return None
    if isinstance(node, L.Aggregate) and name in node.group_names and not node.grouping_sets:
        # A filter on a grouping key drops whole groups, which the join above drops anyway
        # (TPC-H Q17: the per-part average over the lineitem rows of 204 parts, not 200,000).
        rest = trace_scan_column(node.input, name)
        return [node] + rest if rest else None
    if isinstance(node, L.Join):
        for side in _THROUGH.get(node.kind, ()):
            rest = trace_scan_column(getattr(node, side), name)
            if rest:
                return [node] + rest
    return None


