"""UNION [ALL] / INTERSECT / EXCEPT: bind both sides, align columns, then ORDER BY and LIMIT.

Output columns take the left side's names; each side's columns are renamed to the set
operation's internal names, so the executor only concatenates (UNION ALL) or compares rows
(`SetOp` with distinct semantics). ORDER BY may use ordinals or output names.
"""

from __future__ import annotations

from sqlglot import exp

from catalog.errors import AnalysisError
from planner import logical as L

_KINDS = {exp.Union: "union", exp.Intersect: "intersect", exp.Except: "except"}


def bind_set_operation(node: exp.Expression, ctx) -> tuple[object, list[L.ResultColumnInfo]]:
    from planner.binder import bind_query, order_and_limit

    left_plan, left_cols = bind_query(node.this, ctx)
    right_plan, right_cols = bind_query(node.expression, ctx)
    if len(left_cols) != len(right_cols):
        raise AnalysisError(
            f"{_KINDS[type(node)].upper()} operands have different column counts: "
            f"{len(left_cols)} and {len(right_cols)}")
    names = [ctx.names.new("__u") for _ in left_cols]
    left = L.Rename(left_plan, [c.internal for c in left_cols], names)
    right = L.Rename(right_plan, [c.internal for c in right_cols], names)
    distinct = bool(node.args.get("distinct"))
    plan = L.SetOp(_KINDS[type(node)], distinct, left, right)
    cols = [L.ResultColumnInfo(c.name, n, c.type if c.type == r.type else None)
            for c, r, n in zip(left_cols, right_cols, names)]
    plan = order_and_limit(node, plan, cols, ctx)
    return plan, cols
