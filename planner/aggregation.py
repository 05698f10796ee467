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
from planner.collect_aggregates import DorisCollect, collect_call
from planner.more_aggregates import DorisGroupAgg, group_agg_call
from planner.doris_aggregates import DorisAgg, DorisPercentile, agg_call as doris_agg_call
from planner.window_funnel import WindowFunnel, window_funnel_call
from planner.sequence_match import SequenceMatch, sequence_match_call
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


def _resolve_group_item(g: exp.Expression, items: list) -> exp.Expression:
    if isinstance(g, exp.Literal) and not g.is_string:
        pos = int(g.this)
        if not 1 <= pos <= len(items):
            raise AnalysisError(f"Unknown column '{pos}' in 'group statement'")
        return items[pos - 1][1]
    return g


def _set_members(e: exp.Expression) -> list[exp.Expression]:
    if isinstance(e, (exp.Tuple, exp.Paren)):
        return list(e.expressions) if isinstance(e, exp.Tuple) else [e.this]
    return [e]


def _group_exprs(select: exp.Select, items: list) -> tuple[list[exp.Expression], list[list[int]] | None]:
    """The distinct grouping expressions, and the grouping sets as index lists (None: plain)."""
    group = select.args.get("group")
    if group is None:
        return [], None
    exprs: list[exp.Expression] = []

    def index(e: exp.Expression) -> int:
        e = _resolve_group_item(e, items)
        for i, x in enumerate(exprs):
            if x == e:
                return i
        exprs.append(e)
        return len(exprs) - 1

    # Each GROUP BY element contributes a list of alternatives; the sets are their product.
    alternatives: list[list[list[int]]] = []
    special = False
    if any(not r.expressions for r in group.args.get("rollup") or []):
        # MySQL's `GROUP BY a, b WITH ROLLUP` (Doris's grammar takes it too): ROLLUP(a, b)
        cols = [index(g) for g in group.expressions]
        return exprs, [sorted(set(cols[:i])) for i in range(len(cols), -1, -1)]
    if any(not c.expressions for c in group.args.get("cube") or []):
        group = exp.Group(expressions=[exp.Cube(expressions=list(group.expressions))])
    for g in group.expressions:
        if isinstance(g, exp.Rollup):
            cols = [index(c) for c in g.expressions]
            alternatives.append([cols[:i] for i in range(len(cols), -1, -1)])
            special = True
        elif isinstance(g, exp.Cube):
            cols = [index(c) for c in g.expressions]
            alternatives.append([[c for bit, c in enumerate(cols) if mask >> (len(cols) - 1 - bit) & 1]
                                 for mask in range((1 << len(cols)) - 1, -1, -1)])
            special = True
        elif isinstance(g, exp.GroupingSets):
            alternatives.append([[index(m) for m in _set_members(x)] for x in g.expressions])
            special = True
        else:
            alternatives.append([[index(g)]])
    if not special:
        return exprs, None
    sets: list[list[int]] = [[]]
    for alts in alternatives:
        sets = [a + b for a in sets for b in alts]
    return exprs, [sorted(set(x)) for x in sets]


def plan_aggregation(select: exp.Select, plan: object, scope: Scope, items: list,
                     names: NameGen, constants: set[str] = frozenset()):
    """`constants`: columns joined in above the aggregation (uncorrelated scalar subqueries
    of the select list, HAVING and ORDER BY), which may be read like grouping keys."""
    group_unbound, set_indexes = _group_exprs(select, items)
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
        name = names.new("__g")
        pre_exprs.append(g)
        pre_names.append(name)
        group_names.append(name)
        group_map.append((g, name))
    grouping_sets = None if set_indexes is None else [[group_names[i] for i in s] for s in set_indexes]

    calls: list[L.AggCall] = []
    call_map: list[tuple[exp.Expression, str]] = []

    def argument(e: exp.Expression) -> str:
        if e.find(exp.AggFunc):
            raise AnalysisError("aggregate function cannot contain aggregate parameters")
        for g, name in group_map:
            if g == e:
                return name
        name = names.new("__a")
        pre_exprs.append(e)
        pre_names.append(name)
        return name

    def agg_column(node: exp.Expression) -> exp.Expression:
        for e, name in call_map:
            if e == node:
                return exp.column(name, quoted=True)
        out = names.new("__agg")
        if isinstance(node, (exp.Grouping, exp.GroupingId)):
            if grouping_sets is None:
                raise AnalysisError("GROUPING functions require GROUPING SETS, ROLLUP or CUBE")
            keys = []
            for a in node.expressions:
                key = next((n for g, n in group_map if g == a), None)
                if key is None:
                    raise AnalysisError(f"Argument of GROUPING must be a grouping column: {a.sql()}")
                keys.append(key)
            call = L.AggCall("grouping_id", None, out, args=keys)
        else:
            call = agg_call(node, out, argument)
        calls.append(call)
        call_map.append((node, out))
        return exp.column(out, quoted=True)

    def rewrite(node: exp.Expression) -> exp.Expression:
        for e, name in group_map:
            if node == e:
                return exp.column(name, quoted=True)
        if isinstance(node, exp.AggFunc) and _is_group_aggregate(node) \
                or isinstance(node, (exp.Grouping, exp.GroupingId)):
            return agg_column(node)
        for key, value in list(node.args.items()):
            if isinstance(value, exp.Expression):
                node.set(key, rewrite(value))
            elif isinstance(value, list):
                node.set(key, [rewrite(v) if isinstance(v, exp.Expression) else v for v in value])
        return node

    allowed = set(group_names) | set(constants)

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
            e = o.this
            if isinstance(e, exp.Column) and not e.table and e.name.lower() in aliases:
                order_bound.append(None)  # a select alias, ahead of a column of that name
                continue
            try:
                order_bound.append(finish(e, "ORDER BY"))
            except UnknownColumn:
                order_bound.append(None)
    agg_scope = Scope(scope.columns)
    plan = L.Aggregate(L.Project(plan, pre_exprs, pre_names), group_names, calls, grouping_sets)
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


def agg_call(node: exp.AggFunc, out: str, argument) -> L.AggCall:
    """The AggCall computing `node`; `argument(expr)` names a pre-projected input column."""
    if isinstance(node, exp.Count):
        arg = node.this
        if arg is None or isinstance(arg, exp.Star):
            return L.AggCall("count_all", None, out)
        if isinstance(arg, exp.Distinct):
            if len(arg.expressions) == 1:
                return L.AggCall("count_distinct", argument(arg.expressions[0]), out)
            return L.AggCall("count_distinct_multi", None, out,
                             args=[argument(e) for e in arg.expressions])
        return L.AggCall("count", argument(arg), out)
    if isinstance(node, exp.ApproxDistinct):
        return L.AggCall("count_distinct", argument(node.this), out)
    if isinstance(node, exp.GroupConcat):
        return _group_concat(node, out, argument)
    if isinstance(node, DorisAgg):
        return doris_agg_call(node, out, argument)
    if isinstance(node, WindowFunnel):
        return window_funnel_call(node, out, argument)
    if isinstance(node, SequenceMatch):
        return sequence_match_call(node, out, argument)
    if isinstance(node, DorisCollect):
        return collect_call(node, out, argument)
    if isinstance(node, DorisGroupAgg):
        return group_agg_call(node, out, argument)
    if isinstance(node, DorisPercentile):
        return L.AggCall("percentile", argument(node.this), out, param=node.level)
    if isinstance(node, (exp.ArgMax, exp.ArgMin)):
        return L.AggCall("max_by" if isinstance(node, exp.ArgMax) else "min_by", None, out,
                         args=[argument(node.this), argument(node.expression)])
    for cls, func in _SIMPLE.items():
        if type(node) is cls:
            arg = node.this
            if isinstance(arg, exp.Distinct):
                inner = argument(arg.expressions[0])
                if func in ("min", "max"):
                    return L.AggCall(func, inner, out)
                return L.AggCall(f"{func}_distinct", inner, out)
            return L.AggCall(func, argument(arg), out)
    extra = {exp.Stddev: "stddev_samp", exp.StddevPop: "stddev", exp.StddevSamp: "stddev_samp",
             exp.Variance: "variance_samp", exp.VariancePop: "variance",
             exp.AnyValue: "first", exp.LogicalAnd: "all", exp.LogicalOr: "any"}
    func = extra.get(type(node))
    if func is not None:
        return L.AggCall(func, argument(node.this), out)
    raise NotSupported(f"Aggregate function {node.sql(dialect='doris')} is not supported yet")


def _group_concat(node: exp.GroupConcat, out: str, argument) -> L.AggCall:
    """Doris's `group_concat([DISTINCT] expr[, sep] [ORDER BY ...])`; sqlglot hangs the ORDER BY
    on the last argument (the separator when there is one) and puts a DISTINCT's separator
    among the Distinct's expressions."""
    this = node.this
    sep_node = node.args.get("separator")
    order_node = None
    if isinstance(this, exp.Order):
        order_node, this = this, this.this
    if isinstance(sep_node, exp.Order):
        order_node, sep_node = sep_node, sep_node.this
    distinct = False
    if isinstance(this, exp.Distinct):
        distinct = True
        if len(this.expressions) > 2:
            raise NotSupported("group_concat takes an expression and a separator")
        if len(this.expressions) == 2:
            sep_node = this.expressions[1]
        this = this.expressions[0]
    order = [L.SortKey.of(argument(o.this), o) for o in order_node.expressions] \
        if order_node is not None else []
    separator: str | None = ", "  # Doris's default (AggregateFunctionGroupConcatImplStr)
    if isinstance(sep_node, exp.Null):
        separator = None  # a NULL separator skips every row (as any NULL argument): NULL
    elif sep_node is not None:
        if not (isinstance(sep_node, exp.Literal) and sep_node.is_string):
            raise NotSupported("group_concat separator must be a string constant")
        separator = sep_node.this
    return L.AggCall("group_concat", argument(this), out, separator=separator,
                     distinct=distinct, order=order)
