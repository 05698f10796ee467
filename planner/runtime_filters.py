"""Which scan column a join's probe key reads: the target of a runtime filter.

Doris builds runtime filters (RF) from a hash join's build side and applies them to the probe
side's scan. `trace_scan_column` follows a probe key down through filters, column projections,
renames and probe sides of joins to the OlapScan column it comes from; the planner prints the
filters in EXPLAIN and the executor (`executor/runtime_filter.py`) applies them.
"""

from __future__ import annotations

from sqlglot import exp

from planner import logical as L

FILTERABLE_JOINS = ("inner", "left semi")


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
    if isinstance(node, L.Join) and node.kind in ("inner", "left semi", "left outer"):
        rest = trace_scan_column(node.left, name)
        return [node] + rest if rest else None
    return None


