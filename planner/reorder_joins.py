"""Rule: build inner joins from the WHERE/ON equalities, ordered by estimated cardinality.

For a FROM clause of inner and comma joins, the relations and all conjuncts are collected and
the join tree is rebuilt from estimates (Doris's Nereids reorders the same way from its
statistics; minidoris has row counts and the equality graph, not column statistics):

 1. conjuncts on one relation filter it (and are pushed into its scan); a conjunct over several
    relations that is an OR also filters each of them with what each branch says about it
    (`planner.derive_or_filters`: TPC-H Q7's nation pair, Q19's part and lineitem);
 2. estimates (`JoinGraph.rows`): a relation's rows are its published rows times the
    selectivity of its filters (`planner.statistics.selectivity`); an equality a = b keeps
    1 / ndv of the pairs, where the ndv of a's equivalence class (the columns equated to it) is
    the fewest base rows among their relations, since a key has no more values than the
    smallest table whose key it equals (lineitem.l_suppkey = supplier.s_suppkey: 10,000); several
    equalities between the same two relations (a composite key) keep at least
    1 / min(base rows). A set of relations has rows = product of rows x product of selectivities,
    whatever the order;
 3. the relation with the most estimated rows (the fact table) starts the tree; repeatedly, the
    linked *unit* whose join leaves the fewest rows joins next (ties: the smaller unit). A unit
    is a relation with its private snowflake: the relations that reach the rest of the query
    only through it (nation and region behind supplier). They are joined into it first, as a
    bushy build side, so that their filters reach its scan as runtime filters and the fact
    table gets the unit's smaller key set (TPC-H Q21: 400 Saudi suppliers instead of all
    10,000);
 4. of the tree and the unit, the one with more estimated rows is the probe (left) side:
    runtime filters flow from the build side into the probe side's scans (the executor builds
    on the smaller input either way); except that a side whose join keys are the grouping keys
    of an aggregation (a decorrelated subquery) probes, so that the other side's keys filter
    the rows it aggregates (TPC-H Q20: the lineitem rows of 2,000 parts, not of all 200,000);
 5. a conjunct over several relations filters at the lowest join where all of them are present;
    a relation linked by nothing is only cross-joined when nothing linked is left.
So a star schema query never forms a cross product where an equality exists, whatever the
order of the FROM list (SSB lists dimensions first).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

from planner import logical as L
from planner.derive_or_filters import derive_or_filters
from planner.runtime_filters import trace_scan_column
from planner.scope import referenced
from planner.statistics import estimate_rows, selectivity


@dataclass
class Relation:
    plan: object
    names: set[str]          # internal column names it produces
    rows: float              # estimated rows after its filters
    base_rows: float         # estimated rows before its filters
    ndv: object = None       # ndv(column) of an analysed table's scan (statistics.scan_ndv)


def base_rows(plan: object, catalog) -> float:
    """Estimated rows a relation's plan produces (its filters included)."""
    return max(estimate_rows(plan, catalog), 1.0)


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


@dataclass
class JoinGraph:
    """Relations, the equalities between them and the multi-relation filters not yet placed."""

    rels: list[Relation]
    edges: list[tuple[int, str, int, str]]
    residual: list[tuple[exp.Expression, set[int]]]
    pair_selectivity: dict[frozenset, float] = field(default_factory=dict)
    neighbours: dict[int, set[int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.neighbours = {i: set() for i in range(len(self.rels))}
        parent: dict[str, str] = {}

        def find(x: str) -> str:
            while parent.setdefault(x, x) != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x
        for a, an, b, bn in self.edges:
            parent[find(an)] = find(bn)
            self.neighbours[a].add(b)
            self.neighbours[b].add(a)
        owner = {an: a for a, an, _, _ in self.edges} | {bn: b for _, _, b, bn in self.edges}
        ndv: dict[str, float] = {}
        for name, rel in owner.items():
            root = find(name)
            ndv[root] = min(ndv.get(root, float("inf")), self.rels[rel].base_rows)
        by_pair: dict[frozenset, list[str]] = {}
        for a, an, b, _ in self.edges:
            by_pair.setdefault(frozenset((a, b)), []).append(find(an))
        for pair, classes in by_pair.items():
            sel = 1.0
            for c in set(classes):
                sel /= max(ndv[c], 1.0)
            if len(set(classes)) > 1:
                sel = max(sel, 1.0 / max(min(self.rels[i].base_rows for i in pair), 1.0))
            self.pair_selectivity[pair] = sel

    def rows(self, members: set[int]) -> float:
        """Estimated rows of joining `members` (order-independent)."""
        rows = 1.0
        for i in members:
            rows *= self.rels[i].rows
        for pair, sel in self.pair_selectivity.items():
            if pair <= members:
                rows *= sel
        return max(rows, 1.0)

    def linked(self, i: int, members: set[int]) -> bool:
        return bool(self.neighbours[i] & members)

    def unit(self, c: int, tree: set[int], remaining: set[int]) -> set[int]:
        """`c` with the components of the remaining relations that reach the tree only
        through `c` (its private snowflake)."""
        unit, rest = {c}, remaining - {c}
        while rest:
            component, frontier = set(), [next(iter(rest))]
            while frontier:
                i = frontier.pop()
                if i in component:
                    continue
                component.add(i)
                frontier += [j for j in self.neighbours[i] if j in rest and j not in component]
            rest -= component
            touches = set().union(*(self.neighbours[i] for i in component))
            if c in touches and not touches & tree:
                unit |= component
        return unit

    def keys(self, left: set[int], right: set[int]) -> tuple[list[str], list[str]]:
        lkeys, rkeys = [], []
        for a, an, b, bn in self.edges:
            if a in left and b in right:
                lkeys.append(an)
                rkeys.append(bn)
            elif b in left and a in right:
                lkeys.append(bn)
                rkeys.append(an)
        return lkeys, rkeys

    def place_residual(self, tree: object, members: set[int]) -> object:
        ready = [c for c, rels in self.residual if rels <= members]
        if not ready:
            return tree
        self.residual = [(c, rels) for c, rels in self.residual if not rels <= members]
        return L.Filter(tree, exp.and_(*ready))


def build_join_tree(relations: list[Relation], conjuncts: list[exp.Expression],
                    filter_relation, after_filters=None) -> tuple[object, float]:
    """The join tree and its estimated rows; `filter_relation(plan, conj)` wraps one
    relation's plan in a filter; `after_filters(i, relation)`, when given, may wrap each
    filtered relation further (and change its `rows`) before the joins are ordered."""
    owner = {name: i for i, r in enumerate(relations) for name in r.names}
    edges, residual = [], []

    def filter_one(i: int, conj: exp.Expression) -> None:
        relations[i].plan = filter_relation(relations[i].plan, conj)
        relations[i].rows *= selectivity(conj, relations[i].ndv)

    for conj in conjuncts:
        rels = {owner[n] for n in referenced(conj) if n in owner}
        if len(rels) == 1 and not conj.find(exp.Subquery):
            filter_one(rels.pop(), conj)
            continue
        edge = _edge(conj, owner)
        if edge is not None:
            edges.append(edge)
            continue
        residual.append((conj, rels))
        if len(rels) > 1 and not conj.find(exp.Subquery):
            for i, derived in derive_or_filters(conj, rels, owner):
                filter_one(i, derived)
    if after_filters is not None:
        for i, relation in enumerate(relations):
            after_filters(i, relation)
    graph = JoinGraph(relations, edges, residual)
    plan = _join_all(graph, set(range(len(relations))))
    leftover = [c for c, _ in graph.residual]
    if leftover:
        plan = L.Filter(plan, exp.and_(*leftover))
    return plan, graph.rows(set(range(len(relations))))


def _join_all(g: JoinGraph, members: set[int], root: int | None = None) -> object:
    """Steps 3-5 of the module docstring over `members`, starting from `root`."""
    if root is None:
        root = max(members, key=lambda i: (g.rels[i].rows, g.rels[i].base_rows, -i))
    tree, in_tree = g.rels[root].plan, {root}
    remaining = members - in_tree
    while remaining:
        linked = [i for i in sorted(remaining) if g.linked(i, in_tree)]
        if not linked:
            nxt = min(remaining, key=lambda i: (g.rels[i].rows, i))
            tree = L.Join(tree, g.rels[nxt].plan, "cross", [], [])
            in_tree.add(nxt)
            remaining.discard(nxt)
            tree = g.place_residual(tree, in_tree)
            continue
        tree_rows = g.rows(in_tree)
        best = None
        for c in linked:
            unit = g.unit(c, in_tree, remaining) if g.rels[c].rows <= tree_rows else {c}
            key = (g.rows(in_tree | unit), g.rows(unit), c)
            if best is None or key < best[0]:
                best = (key, c, unit)
        _, c, unit = best
        unit_plan = _join_all(g, unit, c) if len(unit) > 1 else g.rels[c].plan
        tree_keys, unit_keys = g.keys(in_tree, unit)
        unit_grouped = filters_grouped_rows(unit_plan, unit_keys)
        if unit_grouped != filters_grouped_rows(tree, tree_keys):
            unit_probes = unit_grouped
        else:
            unit_probes = g.rows(unit) > tree_rows
        if unit_probes:
            tree = L.Join(unit_plan, tree, "inner", unit_keys, tree_keys)
        else:
            tree = L.Join(tree, unit_plan, "inner", tree_keys, unit_keys)
        in_tree |= unit
        remaining -= unit
        tree = g.place_residual(tree, in_tree)
    return tree


def filters_grouped_rows(plan: object, keys: list[str]) -> bool:
    """Does a runtime filter on one of `keys` reach the rows an aggregation in `plan` groups
    (a decorrelated subquery grouped by its correlation keys)?"""
    for k in keys:
        path = trace_scan_column(plan, k)
        if path and any(isinstance(n, L.Aggregate) for n in path[:-1]):
            return True
    return False
