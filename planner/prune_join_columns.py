"""Rule: each join outputs only the columns the plan above it reads (`Join.output`).

Column pruning (`prune_columns`) narrows the scans, but a join still passes on every column of
both inputs, its keys included, to the joins above it: TPC-H Q9's last join carried 16 columns
of which 6 are read above it. Acero materialises each output column of each matched row (a
320k-row join with 15 columns takes 2.3x as long as with 5), so this rule records, top-down,
which columns each join's consumers need, and the executor asks Acero for those only.

Requirements flow down: a node's own references (filter conditions, sort keys, grouping keys
and aggregate arguments, projection expressions, join keys and residuals) are added to what
its parent needs. Nodes whose output depends on all of their input's columns (DISTINCT, set
operations, windows, renames) need all of it: `None`, and a join under them keeps every
column. A node reached twice (a shared subtree) keeps the union of what both parents need.
"""

from __future__ import annotations

from sqlglot import exp

from planner import logical as L


def _refs(e: exp.Expression | None) -> set[str]:
    return {c.name for c in e.find_all(exp.Column)} if e is not None else set()


def _union(a: set[str] | None, b: set[str]) -> set[str] | None:
    return None if a is None else a | b


def prune_join_columns(plan: object, result_columns: list[str]) -> None:
    """Set `output` on every Join of `plan` (in place)."""
    _Pruner().visit(plan, set(result_columns))


class _Pruner:
    def __init__(self) -> None:
        self.seen: dict[int, set[str] | None] = {}

    def visit(self, node: object, need: set[str] | None) -> None:
        key = id(node)
        if key in self.seen:
            before = self.seen[key]
            need = None if before is None or need is None else before | need
            if need == before:
                return
        self.seen[key] = need
        handler = getattr(self, f"_{type(node).__name__}", None)
        if handler is not None:
            handler(node, need)
            return
        for attr in ("input", "left", "right"):  # anything else needs all of its inputs
            child = getattr(node, attr, None)
            if child is not None:
                self.visit(child, None)

    def _OlapScan(self, node, need) -> None:
        return

    def _InlineTable(self, node, need) -> None:
        return

    def _OneRow(self, node, need) -> None:
        return

    def _Join(self, node: L.Join, need) -> None:
        own = set(node.left_keys) | set(node.right_keys) | _refs(node.residual)
        node.output = None if need is None else sorted(need | _refs(node.residual))
        self.visit(node.left, _union(need, own))
        self.visit(node.right, _union(need, own))

    def _Filter(self, node: L.Filter, need) -> None:
        self.visit(node.input, _union(need, _refs(node.condition)))

    def _Project(self, node: L.Project, need) -> None:
        self.visit(node.input, set().union(*map(_refs, node.exprs)) if node.exprs else set())

    def _TableFunction(self, node: L.TableFunction, need) -> None:
        added = set(node.names)
        self.visit(node.input, None if need is None else
                   (need - added) | set().union(*map(_refs, node.args)))

    def _Extend(self, node: L.Extend, need) -> None:
        added = set(node.names)
        self.visit(node.input, None if need is None else
                   (need - added) | set().union(*map(_refs, node.exprs)))

    def _Aggregate(self, node: L.Aggregate, need) -> None:
        want = set(node.group_names)
        for c in node.calls:
            want |= {a for a in [c.arg, *c.args] if a}
            want |= {k.name for k in c.order}
        for s in node.grouping_sets or []:
            want |= set(s)
        self.visit(node.input, want)

    def _Sort(self, node: L.Sort, need) -> None:
        self.visit(node.input, _union(need, {k.name for k in node.keys}))

    def _Limit(self, node: L.Limit, need) -> None:
        self.visit(node.input, need)

    def _ScalarSubquery(self, node: L.ScalarSubquery, need) -> None:
        self.visit(node.input, need)

    def _Rename(self, node: L.Rename, need) -> None:
        self.visit(node.input, set(node.names))
