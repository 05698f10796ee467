"""Transparent query rewrite to asynchronous materialized views (Doris's MV rewrite, the
subset that is safe to decide on normalised sqlglot trees).

A SELECT is answered from an async view (catalog/mtmv.py) that is usable (fresh, or within
its grace_period; `use_for_rewrite` not false) when, after both are normalised (`_shape`:
every column qualified by its base table's `db.table`, the ON and WHERE conjuncts of inner
joins as one set, equalities with their operands in a fixed order):

  - both read the same set of tables, each once, through inner joins only;
  - every conjunct of the view's is among the query's; the remaining ones (`residual`) are
    applied on the view, so they must be expressions over the view's columns;
  - a view without aggregation: every expression the query uses is rebuilt from the view's
    output expressions (the query may aggregate them);
  - an aggregating view: the query aggregates too, its GROUP BY and residual filter use only
    the view's group-by outputs, and each aggregate rolls up: SUM(x) -> SUM(sum_x),
    MIN / MAX -> MIN / MAX, COUNT(*) / COUNT(x) -> COALESCE(SUM(count), 0). AVG, COUNT
    DISTINCT and other aggregates are not rewritten.

Anything else (outer or semi joins, subqueries, CTEs, set operations, windows, a `*`, a
GROUP BY by position, a non-deterministic function, a stale view) keeps the query as it is:
a wrong rewrite is worse than none. The result keeps the query's column names. `rewrite`
returns the new tree and the summary EXPLAIN prints (Doris's MaterializedView section).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp

from catalog import mtmv
from catalog.information_schema import table_totals
from planner.naming import output_name

_NOT_DETERMINISTIC = {"now", "current_timestamp", "current_date", "curdate", "curtime",
                      "current_time", "rand", "random", "uuid", "unix_timestamp", "sysdate",
                      "localtime", "localtimestamp", "utc_timestamp", "sleep"}
_ROLLUP = {exp.Sum: exp.Sum, exp.Min: exp.Min, exp.Max: exp.Max}
MV_ALIAS = "__mv"


class NoMatch(Exception):
    """The view cannot answer the query; the message is Doris's FailSummary wording."""


@dataclass
class _Shape:
    tables: dict[str, tuple[str, str]]           # alias -> (db, table)
    conjuncts: dict[str, exp.Expression] = field(default_factory=dict)  # text -> conjunct


@dataclass
class Outcome:
    tree: exp.Expression | None = None           # the rewritten query, or None
    chosen: str | None = None
    not_chosen: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)  # (view, reason)

    def summary(self) -> list[str]:
        """The lines EXPLAIN appends (Doris 2.1's MaterializedView summary)."""
        if self.chosen is None and not self.failed:
            return []
        lines = ["", "MaterializedView", "MaterializedViewRewriteSuccessAndChose:"]
        lines.append(f"  Names: {self.chosen or ''}")
        lines += ["MaterializedViewRewriteSuccessButNotChose:",
                  f"  Names: {', '.join(self.not_chosen)}", "MaterializedViewRewriteFail:"]
        for name, reason in self.failed:
            lines += [f"  Name: {name}", f"  FailSummary: {reason}"]
        return lines


def rewrite(query: exp.Expression, cat, db: str | None) -> Outcome:
    """Try every usable view over the query's tables; the first that matches answers it."""
    out = Outcome()
    if not isinstance(query, exp.Select) or db is None:
        return out
    with cat.lock:
        if not mtmv.views(cat):
            return out
        try:
            q = _shape(query, cat, db)
        except NoMatch:
            return out
        wanted = set(q.tables.values())
        candidates = []
        for mv_db, table in mtmv.views(cat):
            bases = {(b["db"], b["table"]) for b in table.mtmv.get("base_tables", [])}
            if not bases & wanted:
                continue
            if not mtmv.usable_for_rewrite(cat, table):
                out.failed.append((table.name, "mv is not fresh or not usable for rewrite"))
                continue
            candidates.append((table_totals(table)[2], mv_db.name, table.name,
                               dict(table.mtmv), [c.name for c in table.columns]))
    # the view with the fewest rows is chosen (Doris's cost-based choice, roughly)
    for _, mv_db, name, rec, columns in sorted(candidates, key=lambda c: (c[0], c[2])):
        try:
            mv_query = sqlglot.parse_one(rec["query"], read="doris")
            if not isinstance(mv_query, exp.Select):
                raise NoMatch("View struct info is invalid")
            with cat.lock:
                v = _shape(mv_query, cat, rec["db"])
            tree = _rewrite(query, q, mv_query, v, columns, cat, db, (mv_db, name))
        except NoMatch as e:
            out.failed.append((name, str(e)))
            continue
        if out.tree is None:
            out.tree, out.chosen = tree, name
        else:
            out.not_chosen.append(name)
    return out


# -- normalising ---------------------------------------------------------------------------
def _shape(select: exp.Select, cat, db: str) -> _Shape:
    for bad in (exp.With, exp.Subquery, exp.Window, exp.Lateral, exp.Union, exp.Intersect,
                exp.Except):
        if any(True for _ in select.find_all(bad)):
            raise NoMatch("View struct info is invalid")
    if any(isinstance(i, exp.Star) or isinstance(i, exp.Column) and isinstance(i.this, exp.Star)
           for i in select.expressions):
        raise NoMatch("View struct info is invalid")
    if any(isinstance(n, exp.Select) and n is not select for n in select.walk()):
        raise NoMatch("View struct info is invalid")
    for f in select.find_all(exp.Func):
        name = (f.name if isinstance(f, exp.Anonymous) else f.sql_name()).lower()
        if name in _NOT_DETERMINISTIC or isinstance(f, exp.Rand):
            raise NoMatch("View struct info is invalid")
    src = select.args.get("from_")
    if src is None or not isinstance(src.this, exp.Table):
        raise NoMatch("View struct info is invalid")
    relations = [src.this]
    conditions: list[exp.Expression] = []
    for join in select.args.get("joins") or []:
        if join.side or (join.kind or "").upper() not in ("", "INNER", "CROSS") \
                or join.args.get("using") or join.args.get("method") \
                or not isinstance(join.this, exp.Table):  # NATURAL: conditions implied
            raise NoMatch("The graph logic between query and view is not consistent")
        relations.append(join.this)
        if join.args.get("on") is not None:
            conditions.append(join.args["on"])
    shape = _Shape({})
    for rel in relations:
        if not isinstance(rel.this, exp.Identifier) or rel.args.get("partition") is not None:
            raise NoMatch("View struct info is invalid")
        rdb = cat.dbs.get(rel.db or db)
        table = rdb.tables.get(rel.name) if rdb is not None else None
        if table is None or mtmv.is_mtmv(table):
            raise NoMatch("View struct info is invalid")
        key = (rdb.name, table.name)
        if key in shape.tables.values():
            raise NoMatch("View struct info is invalid")  # a self join
        shape.tables[rel.alias_or_name] = key
    where = select.args.get("where")
    if where is not None:
        conditions.append(where.this)
    for cond in conditions:
        for c in cond.flatten() if isinstance(cond, exp.And) else [cond]:
            n = _normalise(c.unnest() if isinstance(c, exp.Paren) else c, shape, cat)
            shape.conjuncts[_text(n)] = n
    return shape


def _normalise(e: exp.Expression, shape: _Shape, cat) -> exp.Expression:
    """`e` with every column qualified by its table's `db.table`, equalities ordered."""
    def qualify(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Column):
            return _qualified(node, shape, cat)
        return node
    out = e.copy().transform(qualify)
    for cmp in list(out.find_all(exp.LT, exp.LTE)):  # a < b is b > a
        flipped = (exp.GT if isinstance(cmp, exp.LT) else exp.GTE)(
            this=cmp.expression, expression=cmp.this)
        if cmp is out:
            out = flipped
        else:
            cmp.replace(flipped)
    for eq in list(out.find_all(exp.EQ)):
        left, right = eq.this, eq.expression
        if _text(left) > _text(right):
            eq.set("this", right)
            eq.set("expression", left)
    if isinstance(out, exp.Paren):
        out = out.unnest()
    return out


def _qualified(col: exp.Column, shape: _Shape, cat) -> exp.Column:
    name = col.name.lower()
    if col.table:
        key = shape.tables.get(col.table)
        if key is None or col.args.get("db"):
            raise NoMatch("View struct info is invalid")
        candidates = [key]
    else:
        candidates = [k for k in shape.tables.values()
                      if cat.dbs[k[0]].tables[k[1]].column(name) is not None]
    if len(candidates) != 1 or cat.dbs[candidates[0][0]].tables[candidates[0][1]] \
            .column(name) is None:
        raise NoMatch("The columns used by query are not in view")
    db, table = candidates[0]
    return exp.Column(this=exp.to_identifier(name), table=exp.to_identifier(f"{db}.{table}"))


def _text(e: exp.Expression) -> str:
    return e.sql(dialect="doris", normalize_functions="lower")


# -- matching ------------------------------------------------------------------------------
def _rewrite(query: exp.Select, q: _Shape, view: exp.Select, v: _Shape, columns: list[str],
             cat, db: str, mv_name: tuple[str, str]) -> exp.Select:
    if set(q.tables.values()) != set(v.tables.values()):
        raise NoMatch("The graph logic between query and view is not consistent")
    missing = [t for t in v.conjuncts if t not in q.conjuncts]
    if missing:
        raise NoMatch("Predicate compensate fail")
    residual = [c for t, c in q.conjuncts.items() if t not in v.conjuncts]
    if view.args.get("distinct") or view.args.get("having") or view.args.get("limit") \
            or view.args.get("order"):
        raise NoMatch("View struct info is invalid")
    outputs: dict[str, exp.Expression] = {}
    aggregates: dict[str, str] = {}   # normalised aggregate text -> view column
    for item, name in zip(view.expressions, columns):
        node = _normalise(item.unalias(), v, cat)
        col = exp.column(name, table=MV_ALIAS, quoted=True)
        if node.find(exp.AggFunc):
            aggregates[_text(node)] = name
        else:
            outputs.setdefault(_text(node), col)
    view_aggregates = bool(aggregates) or view.args.get("group") is not None
    if view_aggregates and any(v.conjuncts[t].find(exp.AggFunc) for t in v.conjuncts):
        raise NoMatch("View struct info is invalid")
    query_aggregates = query.args.get("group") is not None or \
        any(i.find(exp.AggFunc) for i in query.expressions)
    if view_aggregates and not query_aggregates:
        raise NoMatch("Match mode is invalid")

    def mapped(e: exp.Expression, allow_aggregates: bool) -> exp.Expression:
        """`e` (normalised) rebuilt over the view's columns, or NoMatch."""
        def swap(node: exp.Expression) -> exp.Expression:
            text = _text(node)
            if text in outputs:
                return outputs[text].copy()
            if isinstance(node, exp.AggFunc) and view_aggregates:
                if not allow_aggregates:
                    raise NoMatch("The columns used by query are not in view")
                return _roll_up(node, aggregates)
            return node
        out = e.transform(swap)
        if any(c.table != MV_ALIAS for c in out.find_all(exp.Column)):
            raise NoMatch("The columns used by query are not in view")
        return out

    def query_expr(e: exp.Expression, allow_aggregates: bool = True) -> exp.Expression:
        return mapped(_normalise(e, q, cat), allow_aggregates)

    new = exp.select(*[exp.alias_(query_expr(i.unalias()), output_name(i), quoted=True)
                       for i in query.expressions])
    new = new.from_(exp.Table(this=exp.to_identifier(mv_name[1], quoted=True),
                              db=exp.to_identifier(mv_name[0], quoted=True),
                              alias=exp.TableAlias(this=exp.to_identifier(MV_ALIAS))))
    if residual:
        new = new.where(exp.and_(*[mapped(c, allow_aggregates=False) for c in residual]))
    group = query.args.get("group")
    if group is not None:
        if any(isinstance(g, exp.Literal) for g in group.expressions) or \
                group.args.get("rollup") or group.args.get("cube") or \
                group.args.get("grouping_sets"):
            raise NoMatch("View struct info is invalid")
        new = new.group_by(*[query_expr(g, allow_aggregates=False) for g in group.expressions])
    having = query.args.get("having")
    if having is not None:
        new = new.having(query_expr(having.this))
    if query.args.get("distinct"):
        new.set("distinct", query.args["distinct"].copy())
    order = query.args.get("order")
    if order is not None:
        names = {output_name(i) for i in query.expressions}
        items = []
        for o in order.expressions:
            target = o.this
            if isinstance(target, exp.Column) and not target.table and target.name in names:
                items.append(o.copy())
                continue
            if isinstance(target, exp.Literal):
                raise NoMatch("View struct info is invalid")
            item = o.copy()
            item.set("this", query_expr(target))
            items.append(item)
        new.set("order", exp.Order(expressions=items))
    for part in ("limit", "offset"):
        if query.args.get(part) is not None:
            new.set(part, query.args[part].copy())
    return new


def _roll_up(agg: exp.AggFunc, aggregates: dict[str, str]) -> exp.Expression:
    """The query's aggregate as a re-aggregation of a view column."""
    if isinstance(agg.this, exp.Distinct):
        raise NoMatch("The columns used by query are not in view")
    text = _text(agg)
    if type(agg) in _ROLLUP and text in aggregates:
        return _ROLLUP[type(agg)](this=exp.column(aggregates[text], table=MV_ALIAS, quoted=True))
    if isinstance(agg, exp.Count):
        star = isinstance(agg.this, exp.Star)
        for candidate, name in aggregates.items():
            if candidate == text or star and candidate in ("count(*)", "count(1)"):
                total = exp.Sum(this=exp.column(name, table=MV_ALIAS, quoted=True))
                return exp.Coalesce(this=total, expressions=[exp.Literal.number(0)])
    raise NoMatch("The columns used by query are not in view")
