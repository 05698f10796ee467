"""Rule: build inner joins from the WHERE/ON equalities, ordered by estimated size.

For a FROM clause of inner and comma joins, the relations and all conjuncts are collected and
the join tree is rebuilt greedily, left-deep:
 1. conjuncts on one relation filter it (and are pushed into its scan);
 2. the largest estimated relation (the fact table) is the probe side;
 3. repeatedly, among the relations linked to the tree by an equality, the smallest estimated
    one is joined as the build side, with every equality between it and the tree as keys;
    a relation linked by nothing is only cross-joined when nothing else is left;
 4. a conjunct over several relations filters as soon as all of them are in the tree.
So a star schema query never forms a cross product where an equality exists, whatever the
order of the FROM list (SSB lists dimensions first).

Estimates: rows from the published rowsets (`planner.statistics`), times a selectivity per
filter conjunct (equality 0.1, IN 0.2, anything else 0.3); a filtered dimension shrinks the
estimate of what it joins (its selectivity carries over).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from planner import logical as L
from planner.scope import referenced
from planner.statistics import scan_statistics

_SELECTIVITY = {exp.EQ: 0.1, exp.In: 0.2}


@dataclass
class Relation:
    plan: object
    names: set[str]          # internal column names it produces
    rows: float              # estimated rows after its filters
    base_rows: float         # estimated rows before its filters


def base_rows(plan: object, catalog) -> float:
    if isinstance(plan, L.OlapScan):
        with catalog.lock:
            table = catalog.get_table(plan.db or None, plan.table)
            part_ids = sorted({t.partition_id for t in plan.tablets})
            return float(max(scan_statistics(table, part_ids, table.base_index_id).rows, 1))
    if isinstance(plan, L.InlineTable):
        return float(max(plan.table.num_rows, 1))
    for attr in ("input", "left"):
        child = getattr(plan, attr, None)
        if child is not None:
            rows = base_rows(child, catalog)
            return rows * (0.1 if isinstance(plan, L.Aggregate) else 1.0)
    return 1000.0


def _selectivity(conj: exp.Expression) -> float:
    return _SELECTIVITY.get(type(conj), 0.3)


def _edge(conj: exp.Expression, owner: dict[str, int]) -> tuple[int, str, int, str] | None:
    if not isinstance(conj, exp.EQ):
        return None
    a, b = conj.this, conj.expression
    if not (isinstance(a, exp.Column) and isinstance(b, exp.Column)):
        return None
    ra, rb = owner.get(a.name), owner.get(b.name)
    if ra is None or rb is None or ra == rb:
        return None
    return ra, a.name, rb, b.name


def build_join_tree(relations: list[Relation], conjuncts: list[exp.Expression],
                    filter_relation) -> object:
    """The join tree; `filter_relation(plan, conj)` wraps one relation's plan in a filter."""
    owner = {name: i for i, r in enumerate(relations) for name in r.names}
    edges, residual = [], []
    for conj in conjuncts:
        rels = {owner[n] for n in referenced(conj) if n in owner}
        if len(rels) == 1 and not conj.find(exp.Subquery):
            i = rels.pop()
            relations[i].plan = filter_relation(relations[i].plan, conj)
            relations[i].rows *= _selectivity(conj)
            continue
        edge = _edge(conj, owner)
        if edge is not None:
            edges.append(edge)
        else:
            residual.append((conj, rels))
    remaining = set(range(len(relations)))
    first = max(remaining, key=lambda i: (relations[i].base_rows, -i))
    remaining.discard(first)
    tree, in_tree = relations[first].plan, {first}
    while remaining:
        linked = {j for a, _, b, _ in edges for i, j in ((a, b), (b, a)) if i in in_tree and j in remaining}
        pool = linked or remaining
        nxt = min(pool, key=lambda i: (relations[i].rows, i))
        left_keys, right_keys = [], []
        for a, an, b, bn in edges:
            if a in in_tree and b == nxt:
                left_keys.append(an)
                right_keys.append(bn)
            elif b in in_tree and a == nxt:
                left_keys.append(bn)
                right_keys.append(an)
        kind = "inner" if left_keys else "cross"
        tree = L.Join(tree, relations[nxt].plan, kind, left_keys, right_keys)
        in_tree.add(nxt)
        remaining.discard(nxt)
        ready = [c for c, rels in residual if rels <= in_tree]
        residual = [(c, rels) for c, rels in residual if not rels <= in_tree]
        if ready:
            tree = L.Filter(tree, exp.and_(*ready))
    leftover = [c for c, _ in residual]
    if leftover:
        tree = L.Filter(tree, exp.and_(*leftover))
    return tree
