"""GROUP BY / aggregate planning: Project(keys, arguments) -> Aggregate -> rewritten outputs.

Grouping keys and aggregate arguments are first computed as columns (`__gN`, `__aN`), then one
Aggregate node groups by the keys and computes every distinct aggregate call once. The select
list, HAVING and ORDER BY are rewritten over the Aggregate's output: a subtree equal to a
grouping key becomes that key's column, an aggregate call becomes its result column. Anything
left that reads a non-grouped column violates ONLY_FULL_GROUP_BY (Doris enforces it).
"""

from __future__ import annotations

from sqlglot import exp

from catalog.errors import AnalysisError, NotSupported, UnknownColumn
from planner import logical as L
from planner.naming import NameGen
from planner.scope import Scope, referenced

_SIMPLE = {exp.Sum: "sum", exp.Min: "min", exp.Max: "max", exp.Avg: "mean"}


def has_aggregates(items: list, having: exp.Expression | None, order: exp.Expression | None) -> bool:
    nodes = [e for _, e, _ in items]
    if having is not None:
        nodes.append(having)
    if order is not None:
        nodes.append(order)
    return any(_is_group_aggregate(a) for n in nodes for a in n.find_all(exp.AggFunc))


def _is_group_aggregate(node: exp.AggFunc) -> bool:
    """An aggregate call that is not the function of a window (`sum(x) OVER (...)`)."""
    return not (isinstance(node.parent, exp.Window) and node.arg_key == "this")


def _group_exprs(select: exp.Select, items: list) -> list[exp.Expression]:
    group = select.args.get("group")
    if group is None:
        return []
    if group.args.get("rollup") or group.args.get("cube") or group.args.get("grouping_sets"):
        raise NotSupported("ROLLUP/CUBE/GROUPING SETS are not supported yet")
    out = []
    for g in group.expressions:
        if isinstance(g, exp.Literal) and not g.is_string:
            pos = int(g.this)
            if not 1 <= pos <= len(items):
                raise AnalysisError(f"Unknown column '{pos}' in 'group statement'")
            out.append(items[pos - 1][1])
        else:
            out.append(g)
    return out


def plan_aggregation(select: exp.Select, plan: object, scope: Scope, items: list,
                     names: NameGen):
    group_unbound = _group_exprs(select, items)
    aliases = {name.lower(): e for name, e, _ in items}
    group_bound = []
    for g in group_unbound:
        try:
            group_bound.append(scope.bind(g))
        except UnknownColumn:
            if isinstance(g, exp.Column) and not g.table and g.name.lower() in aliases:
                group_bound.append(scope.bind(aliases[g.name.lower()]))
            else:
                raise
    pre_exprs: list[exp.Expression] = []
    pre_names: list[str] = []
    group_names: list[str] = []
    group_map: list[tuple[exp.Expression, str]] = []
    for g in group_bound:
        if any(g == e for e, _ in group_map):
            continue
        name = names.new("__g")
        pre_exprs.append(g)
        pre_names.append(name)
        group_names.append(name)
        group_map.append((g, name))

    calls: list[L.AggCall] = []
    call_map: list[tuple[exp.Expression, str]] = []

    def agg_column(node: exp.AggFunc) -> exp.Expression:
        for e, name in call_map:
            if e == node:
                return exp.column(name, quoted=True)
        func, arg_expr = _agg_spec(node)
        arg_name = None
        if arg_expr is not None:
            if arg_expr.find(exp.AggFunc):
                raise AnalysisError("aggregate function cannot contain aggregate parameters")
            arg_name = names.new("__a")
            pre_exprs.append(arg_expr)
            pre_names.append(arg_name)
        out = names.new("__agg")
        calls.append(L.AggCall(func, arg_name, out))
        call_map.append((node, out))
        return exp.column(out, quoted=True)

    def rewrite(node: exp.Expression) -> exp.Expression:
        for e, name in group_map:
            if node == e:
                return exp.column(name, quoted=True)
        if isinstance(node, exp.AggFunc) and _is_group_aggregate(node):
            return agg_column(node)
        for key, value in list(node.args.items()):
            if isinstance(value, exp.Expression):
                node.set(key, rewrite(value))
            elif isinstance(value, list):
                node.set(key, [rewrite(v) if isinstance(v, exp.Expression) else v for v in value])
        return node

    allowed = set(group_names)

    def finish(e: exp.Expression, where: str) -> exp.Expression:
        out = rewrite(scope.bind(e))
        outputs = allowed | {c.output for c in calls}
        for name in referenced(out):
            if name not in outputs:
                col = next((c.name for c in scope.columns if c.internal == name), name)
                raise AnalysisError(
                    f"'{col}' must appear in the GROUP BY clause or be used in an aggregate "
                    f"function in {where}")
        return out

    new_items = [(n, finish(e, "select list"), t) for n, e, t in items]
    having = select.args.get("having")
    having_bound = finish(_alias_expand(having.this, aliases, scope), "HAVING") if having else None
    order_bound = None
    order = select.args.get("order")
    if order is not None:
        order_bound = []
        for o in order.expressions:
            try:
                order_bound.append(finish(o.this, "ORDER BY"))
            except UnknownColumn:
                order_bound.append(None)
    agg_scope = Scope(scope.columns)
    plan = L.Aggregate(L.Project(plan, pre_exprs, pre_names), group_names, calls)
    return plan, new_items, having_bound, order_bound, agg_scope


def _alias_expand(e: exp.Expression, aliases: dict, scope: Scope) -> exp.Expression:
    """HAVING may name a select alias (MySQL); replace such names by their expressions."""
    def repl(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Column) and not node.table and node.name.lower() in aliases:
            try:
                scope.lookup(node.name)
            except UnknownColumn:
                return aliases[node.name.lower()].copy()
        return node
    return e.copy().transform(repl, copy=False)


def _agg_spec(node: exp.AggFunc) -> tuple[str, exp.Expression | None]:
    if isinstance(node, exp.Count):
        arg = node.this
        if arg is None or isinstance(arg, exp.Star):
            return "count_all", None
        if isinstance(arg, exp.Distinct):
            if len(arg.expressions) != 1:
                raise NotSupported("COUNT(DISTINCT) over several columns is not supported yet")
            return "count_distinct", arg.expressions[0]
        return "count", arg
    if isinstance(node, exp.ApproxDistinct):
        return "count_distinct", node.this
    for cls, func in _SIMPLE.items():
        if type(node) is cls:
            if isinstance(node.this, exp.Distinct):
                if func in ("min", "max"):
                    return func, node.this.expressions[0]
                raise NotSupported(f"{func.upper()}(DISTINCT) is not supported yet")
            return func, node.this
    raise NotSupported(f"Aggregate function {node.sql(dialect='doris')} is not supported yet")
