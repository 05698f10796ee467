"""Rule: where a semi / anti join goes, and which side of it probes.

A WHERE conjunct planned as a semi / anti join (`planner/subqueries.py`: IN, EXISTS and their
negations) filters only the rows of the relations its outer keys belong to. So:

 1. one without a residual whose outer keys are one relation's filters that relation below the
    inner joins (`push_semi`; a flat FROM does the same through `reorder_joins`), after the
    relation's own filters: TPC-H Q18's orders shrink before lineitem joins them, Q20's
    partsupp before the grouped lineitem subquery joins it;
 2. `semi_join` compares the estimated rows of the outer side and of the subquery: when the
    subquery is the larger, the join becomes RIGHT SEMI / RIGHT ANTI with the subquery as the
    left (probe) side, as Doris plans it, so that the outer keys are a runtime filter on the
    subquery's scan (Q4: the lineitem rows of 57k orders instead of 3.8M rows; Q21, Q22). The
    NULL-aware anti join of NOT IN keeps its sides.
"""

from __future__ import annotations

from planner import logical as L
from planner.statistics import estimate_rows


def semi_join(semi, left: object, left_rows: float, catalog) -> object:
    """The semi / anti join of `left` (estimated `left_rows`) against the subquery."""
    if semi.kind in ("left semi", "left anti") and estimate_rows(semi.plan, catalog) > left_rows:
        return semi.join_swapped(left)
    return semi.join(left)


def push_semi(plan: object, semi, relation: str, catalog) -> object | None:
    """`plan` with the semi join applied to `relation` below filters and inner joins, or None
    when the relation is not reached that way."""
    if is_relation(plan, relation):
        return semi_join(semi, plan, estimate_rows(plan, catalog), catalog)
    sides = ("left", "right") if isinstance(plan, L.Join) and plan.kind == "inner" else \
        ("input",) if isinstance(plan, L.Filter) else ()
    for side in sides:
        child = getattr(plan, side)
        if relation in relations_of(child):
            pushed = push_semi(child, semi, relation, catalog)
            if pushed is None:
                return None
            setattr(plan, side, pushed)
            return plan
    return None


def is_relation(node: object, relation: str) -> bool:
    if isinstance(node, L.Filter):
        return is_relation(node.input, relation)
    if isinstance(node, (L.OlapScan, L.InlineTable)):
        return node.alias == relation
    if isinstance(node, L.Rename):
        return node.relation == relation
    return False


def relations_of(node: object) -> set[str]:
    if isinstance(node, (L.OlapScan, L.InlineTable)):
        return {node.alias}
    if isinstance(node, L.Rename):
        return {node.relation}
    if isinstance(node, L.Join):
        return relations_of(node.left) | relations_of(node.right)
    if isinstance(node, L.Filter):
        return relations_of(node.input)
    return set()
