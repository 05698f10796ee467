"""An aggregating SELECT whose select list, HAVING or ORDER BY holds a correlated subquery:
the aggregation becomes a derived table, so that the subquery reads its grouped columns.

  SELECT g, count(*), (SELECT ... WHERE x.b < t.g) FROM t WHERE w GROUP BY g HAVING h
    ->
  SELECT __agg.__g0 AS g, __agg.__a0 AS `count(*)`, (SELECT ... WHERE x.b < __agg.__g0)
  FROM (SELECT g AS __g0, count(*) AS __a0, <HAVING's aggregates> FROM t WHERE w GROUP BY g)
       AS __agg
  WHERE h'

Its subqueries then are ordinary subqueries of a non-aggregating SELECT (planner/subqueries.py,
planner/apply_subqueries.py). A column read outside an aggregate (in the SELECT itself or as an
outer column of a subquery) must be a grouping column: ONLY_FULL_GROUP_BY, as Doris enforces.
"""

from __future__ import annotations

from sqlglot import exp

from catalog.errors import AnalysisError, NotSupported, UnknownColumn
from planner.naming import output_name


def split_aggregation(select: exp.Select, ctx) -> exp.Select:
    from planner.outer_references import outer_refs
    from planner.binder import from_scope
    group = select.args.get("group")
    if group is not None and any(group.args.get(k) for k in ("rollup", "cube", "grouping_sets")):
        raise NotSupported("A correlated subquery with ROLLUP / CUBE / GROUPING SETS is not "
                           "supported yet")
    if select.find(exp.Window):
        raise NotSupported("A correlated subquery beside window functions is not supported yet")
    scope = from_scope(select, ctx)
    items = [e.this if isinstance(e, exp.Alias) else e for e in select.expressions]
    names = [output_name(e) for e in select.expressions]
    aliases = {n.lower(): i for n, i in zip(names, items)}
    group_exprs = [_resolve_group(g, items, aliases) for g in (group.expressions if group else [])]
    group_cols = {}
    for i, g in enumerate(group_exprs):
        if isinstance(g, exp.Column):
            try:
                group_cols[scope.lookup(g.name, g.table or None).internal] = i
            except UnknownColumn:
                pass
    alias = ctx.names.new("__agg")
    aggs: list[exp.Expression] = []
    refs: dict[int, object] = {}
    for e in [*items, select.args.get("having"), select.args.get("order")]:
        for sub in (e.find_all(exp.Query) if e is not None else []):
            if sub.parent_select is not select:
                continue  # nested deeper: covered by its enclosing subquery
            refs.update({id(c): sc for c, sc in outer_refs(sub, scope, ctx)})

    def column_of(col: exp.Column, sc) -> exp.Expression:
        i = group_cols.get(sc.internal)
        if i is None:
            raise AnalysisError(f"'{col.sql(dialect='doris')}' must appear in the GROUP BY "
                                f"clause or be used in an aggregate function")
        return exp.column(f"__g{i}", alias)

    def outer_aggregate(node: exp.Expression) -> bool:
        """An aggregate inside a subquery over outer columns only: the outer query's."""
        cols = list(node.find_all(exp.Column))
        return isinstance(node, exp.AggFunc) and bool(cols) and all(id(c) in refs for c in cols)

    def rewrite(node: exp.Expression, in_sub: bool) -> exp.Expression:
        if not in_sub or outer_aggregate(node):
            if isinstance(node, exp.AggFunc):
                text = node.sql()
                i = next((k for k, a in enumerate(aggs) if a.sql() == text), None)
                if i is None:
                    i = len(aggs)
                    aggs.append(node.copy())
                    if in_sub:  # its columns, qualified for the FROM of the aggregation
                        for c in aggs[-1].find_all(exp.Column):
                            sc = refs[id(next(o for o, n in zip(node.walk(), aggs[-1].walk())
                                              if n is c))]
                            c.replace(exp.column(sc.name, sc.relation))
                return exp.column(f"__a{i}", alias)
            for i, g in enumerate(group_exprs):
                if not isinstance(g, exp.Column) and node == g:
                    return exp.column(f"__g{i}", alias)
            if isinstance(node, exp.Column) and not isinstance(node.this, exp.Star):
                try:
                    return column_of(node, scope.lookup(node.name, node.table or None))
                except UnknownColumn:
                    return node  # a select alias (ORDER BY / HAVING)
        elif isinstance(node, exp.Column) and id(node) in refs:
            return column_of(node, refs[id(node)])
        for key, value in list(node.args.items()):
            children = value if isinstance(value, list) else [value]
            new = [rewrite(c, in_sub or isinstance(node, exp.Query)) if isinstance(c, exp.Expression)
                   else c for c in children]
            node.set(key, new if isinstance(value, list) else new[0])
        return node

    out = exp.Select()
    out.set("expressions", [exp.Alias(this=rewrite(_copy(i, refs), False),
                                      alias=exp.to_identifier(n)) for i, n in zip(items, names)])
    having = select.args.get("having")
    if having is not None:
        h = _with_aliases(_copy(having.this, refs), {k: _copy(v, refs) for k, v in aliases.items()})
        out.set("where", exp.Where(this=rewrite(h, False)))
    order = select.args.get("order")
    if order is not None:
        out.set("order", rewrite(_copy(order, refs), False))
    for arg in ("limit", "offset", "distinct"):
        if select.args.get(arg) is not None:
            out.set(arg, select.args[arg].copy())
    inner = exp.Select(expressions=[exp.Alias(this=g.copy(), alias=exp.to_identifier(f"__g{i}"))
                                    for i, g in enumerate(group_exprs)]
                       + [exp.Alias(this=a, alias=exp.to_identifier(f"__a{i}"))
                          for i, a in enumerate(aggs)])
    for arg in ("from_", "joins", "where", "group"):
        if select.args.get(arg) is not None:
            value = select.args[arg]
            inner.set(arg, [v.copy() for v in value] if isinstance(value, list) else value.copy())
    if group is not None:
        inner.set("group", exp.Group(expressions=[g.copy() for g in group_exprs]))
    out.set("from_", exp.From(this=exp.Subquery(this=inner, alias=exp.TableAlias(
        this=exp.to_identifier(alias)))))
    return out


def _copy(e: exp.Expression, refs: dict) -> exp.Expression:
    """A copy of `e`, with `refs` (keyed by node id) extended to the copied column nodes."""
    copy = e.copy()
    for orig, new in zip(e.walk(), copy.walk()):
        if id(orig) in refs:
            refs[id(new)] = refs[id(orig)]
    return copy


def _resolve_group(g: exp.Expression, items: list, aliases: dict) -> exp.Expression:
    if isinstance(g, exp.Literal) and not g.is_string:
        pos = int(g.this)
        if not 1 <= pos <= len(items):
            raise AnalysisError(f"Unknown column '{pos}' in 'group statement'")
        return items[pos - 1]
    return g


def _with_aliases(e: exp.Expression, aliases: dict) -> exp.Expression:
    """HAVING may name a select alias (MySQL): its expression instead (outside subqueries)."""
    if isinstance(e, exp.Column) and not e.table and e.name.lower() in aliases:
        return aliases[e.name.lower()]
    for key, value in list(e.args.items()):
        children = value if isinstance(value, list) else [value]
        new = [_with_aliases(c, aliases) if isinstance(c, exp.Expression)
               and not isinstance(c, exp.Query) else c for c in children]
        e.set(key, new if isinstance(value, list) else new[0])
    return e
