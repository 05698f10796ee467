"""Join and filter outputs keep only the columns something above them still uses.

Scans already read only the columns a query refers to (prune_columns.py), but a join outputs
both inputs' columns, so a star join carries every key and filter column of every dimension up
to the aggregation: each join copies columns nobody reads again (SSB Q4.1's last join would
output 13 columns where the aggregation reads 4). Doris's planner projects them away the same
way (the output slots of each hash join node).

Walking the plan top-down, `above` is the set of internal column names referred to by the
ancestors of a node (and the result columns). A Join or non-pushed Filter whose ancestors are
known keeps, in its output, only the columns in `above` (`output_columns`); its inputs get
`above` plus what the node itself refers to (keys, residual, condition). A node that names its
output (projection, aggregation, rename) starts a new `above` from its own references; nodes
whose meaning depends on all input columns by position (DISTINCT, set operations, scalar
subqueries) and node types not known here stop the pruning beneath them (`above` = None: keep
everything). Internal names are unique per scan instance, so a name in `above` is exactly the
column it denotes.
"""

from __future__ import annotations

import dataclasses

from sqlglot import exp

from planner import logical as L

_NAMING = (L.Project, L.Aggregate, L.Rename)
_PASS_THROUGH = (L.Filter, L.Sort, L.Limit, L.Extend, L.Window, L.Join)
_LEAVES = (L.OlapScan, L.InlineTable, L.OneRow)


def prune_join_outputs(plan: object, result_columns: list[str]) -> None:
    """Set `output_columns` on the joins and filters of `plan` (in place)."""
    _walk(plan, set(result_columns))


def _walk(node: object, above: set[str] | None) -> None:
    if isinstance(node, _LEAVES):
        return
    own = _own_refs(node)
    if isinstance(node, (L.Join, L.Filter)) and above is not None:
        if not (isinstance(node, L.Filter) and node.pushed):
            node.output_columns = frozenset(above)
    if isinstance(node, _NAMING):
        below: set[str] | None = own
    elif isinstance(node, _PASS_THROUGH) and above is not None:
        below = above | own
    else:
        below = None  # positional or unknown: everything beneath stays
    for child in _children(node):
        _walk(child, below)


def _children(node: object) -> list[object]:
    return [c for c in (getattr(node, a, None) for a in ("input", "left", "right"))
            if c is not None]


def _own_refs(node: object) -> set[str]:
    """Names `node` itself refers to (not its inputs'): strings and column references in its
    fields, searched through lists and helper dataclasses."""
    found: set[str] = set()
    for f in dataclasses.fields(node):
        if f.name in ("input", "left", "right", "output_columns"):
            continue
        _refs(getattr(node, f.name), found)
    return found


def _refs(value: object, found: set[str]) -> None:
    if isinstance(value, str):
        found.add(value)
    elif isinstance(value, exp.Expression):
        found.update(c.name for c in value.find_all(exp.Column))
    elif isinstance(value, (list, tuple, set, frozenset)):
        for v in value:
            _refs(v, found)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            _refs(getattr(value, f.name), found)
