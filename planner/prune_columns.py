"""Column pruning: every OlapScan reads only the columns the plan above it refers to.

The binder gives each scan all of its table's columns (`SELECT *` needs them, and which ones a
query uses is known only once the whole statement is bound). This rule collects every internal
column name the plan refers to — in expressions, join keys, group keys, aggregate and window
arguments, sort keys, renames and the result columns — and drops the other columns from each
scan. Internal names are unique per scan instance (`alias.col#n`), so one set for the whole plan
is exact enough: a column survives when anything at all refers to it.

Nodes whose meaning depends on all of their input's columns by position (DISTINCT, set
operations) keep every column of the scans beneath them unless their input names its columns
itself (a projection, a rename or an aggregation). A scan left with no column (``count(*)``)
keeps its narrowest one, so that it still yields its row count.
"""

from __future__ import annotations

import dataclasses

from sqlglot import exp

from planner import logical as L

_NAMING = (L.Project, L.Rename, L.Aggregate)
_POSITIONAL = (L.Distinct, L.SetOp)
_PASS_THROUGH = (L.Filter, L.Sort, L.Limit)
_FIXED_WIDTH = ("BOOLEAN", "TINYINT", "SMALLINT", "INT", "DATE", "BIGINT", "FLOAT", "DOUBLE",
                "DATETIME", "LARGEINT", "DECIMAL")


def prune_columns(plan: object, result_columns: list[str]) -> None:
    """Shrink every scan in `plan` to the columns referred to (in place)."""
    used: set[str] = set(result_columns)
    keep_all: set[int] = set()
    _collect(plan, used, keep_all)
    for scan in _scans(plan):
        if id(scan) in keep_all:
            continue
        pairs = [(c, o) for c, o in zip(scan.columns, scan.output) if o in used]
        if not pairs:
            pairs = [_narrowest(scan)]
        scan.columns = [c for c, _ in pairs]
        scan.output = [o for _, o in pairs]


def _narrowest(scan: L.OlapScan) -> tuple[str, str]:
    def width(pair: tuple[str, str]) -> int:
        t = scan.column_types[pair[0]]
        return _FIXED_WIDTH.index(t.kind) if t.kind in _FIXED_WIDTH else len(_FIXED_WIDTH)
    return min(zip(scan.columns, scan.output), key=width)


def _collect(node: object, used: set[str], keep_all: set[int]) -> None:
    if isinstance(node, L.OlapScan):
        return
    if isinstance(node, _POSITIONAL):
        for child in _children(node):
            inner = child
            while isinstance(inner, _PASS_THROUGH):
                inner = inner.input
            if not isinstance(inner, _NAMING):
                keep_all.update(id(s) for s in _scans(child))
    for f in dataclasses.fields(node):
        _refs(getattr(node, f.name), used, keep_all)


def _refs(value: object, used: set[str], keep_all: set[int]) -> None:
    if isinstance(value, str):
        used.add(value)
    elif isinstance(value, exp.Expression):
        used.update(c.name for c in value.find_all(exp.Column))
    elif isinstance(value, (list, tuple)):
        for v in value:
            _refs(v, used, keep_all)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        if _is_plan_node(value):
            _collect(value, used, keep_all)
        else:
            for f in dataclasses.fields(value):
                _refs(getattr(value, f.name), used, keep_all)


def _is_plan_node(value: object) -> bool:
    return any(hasattr(value, a) for a in ("input", "left")) or isinstance(
        value, (L.OlapScan, L.InlineTable, L.OneRow))


def _children(node: object) -> list[object]:
    return [c for c in (getattr(node, a, None) for a in ("input", "left", "right")) if c is not None]


def _scans(node: object) -> list[L.OlapScan]:
    if isinstance(node, L.OlapScan):
        return [node]
    return [s for c in _children(node) for s in _scans(c)]
