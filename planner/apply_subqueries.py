"""Any subquery expression, by the distinct values of the outer columns it reads.

planner/subqueries.py turns the common shapes into semi / anti / grouped joins on correlation
equalities. Every other subquery expression - a scalar subquery correlated by non-equalities,
EXISTS, `x [NOT] IN (SELECT ...)` and `x op ANY/SOME/ALL (SELECT ...)` anywhere an expression
may stand (select list, CASE, ORDER BY, under OR) - is evaluated here once per distinct value
of the outer columns it reads, as DuckDB's and Nereids' general decorrelation does, by SQL
rewriting (the results are bound like any derived table):

  D  = SELECT DISTINCT <outer columns read> AS __oN FROM <the outer FROM>
       WHERE <the outer WHERE's conjuncts without subqueries>
  R  = the subquery's rows per D row: its FROM cross-joined to D, outer columns read as D's
       (an equality correlation makes it a hash join, any other a filtered cross join); an
       aggregate without GROUP BY is grouped by D's columns and left-joined back to D (one row
       per D row, COUNT -> 0 where no inner row matches); ORDER BY ... LIMIT n per D row is a
       ROW_NUMBER() over a partition by D's columns; a derived table of the FROM that reads
       outer columns itself (a set operation of correlated SELECTs is one) is instead computed
       per D row: D joined into each of its SELECTs, D's columns carried out (`_pushed`)
  S  = R grouped by D's columns:
         scalar          MAX(value), COUNT(*) (more than one row is an error at run time)
         EXISTS          one row per D row with rows
         x op ANY / ALL  COUNT of rows where `x op value` is TRUE, FALSE, and all rows
                         (IN is = ANY, NOT IN its negation: MySQL's NULL semantics follow)
  the outer rows are left-joined to S on `outer column <=> __oN` (NULL-safe: a NULL outer
  value has a result of its own), and the expression becomes a function of S's columns.

Without outer columns (an uncorrelated IN in the select list, `SELECT 1 IN (SELECT ...)`) S is
one row, cross-joined. `x IN (SELECT c ...)` uncorrelated with x a column is a left join of the
outer rows against the distinct non-NULL c, plus a one-row count of rows and NULLs.
"""

from __future__ import annotations

import re

from sqlglot import exp

from catalog.errors import AnalysisError, NotSupported
from planner.outer_references import outer_refs
from planner.scope import Scope, ScopeColumn, conjuncts
from planner.subqueries import SubqueryJoin, under

_COUNTS = (exp.Count, exp.ApproxDistinct)
QUANTIFIED = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ)
SET_OPERATIONS = (exp.Union, exp.Intersect, exp.Except)
_KEY_COLUMN = re.compile(r"__[oe]\d+$")  # D's columns, never a user's star column


def _as(e: exp.Expression, name: str) -> exp.Alias:
    """`e AS name` (exp.alias_ would name a Subquery's table alias instead)."""
    return exp.Alias(this=e, alias=exp.to_identifier(name))


def is_apply_node(node: exp.Expression) -> bool:
    """A subquery expression this module evaluates: IN (query) or a comparison with ANY/ALL."""
    if isinstance(node, exp.In):
        return node.args.get("query") is not None
    return isinstance(node, QUANTIFIED) and isinstance(node.expression, (exp.Any, exp.All))


def _over_set_operation(q: exp.Expression, alias: str) -> exp.Select:
    """`SELECT * FROM (q) alias` for a set operation `q`, its ORDER BY / LIMIT / OFFSET moved
    to the SELECT (where they are per outer row, like any subquery's)."""
    body = q.copy()
    wrapper = exp.select("*")
    for arg in ("order", "limit", "offset"):
        wrapper.set(arg, body.args.get(arg))
        body.set(arg, None)
    return wrapper.from_(body.subquery(alias))


def _query_of(node: exp.Expression) -> exp.Expression:
    if isinstance(node, exp.In):
        q = node.args["query"]
    elif isinstance(node, (exp.Subquery, exp.Exists)):
        q = node.this
    else:
        q = node.expression.this
    while isinstance(q, exp.Subquery):
        q = q.this
    if isinstance(q, SET_OPERATIONS):
        q = _over_set_operation(q, "__u")
    if not isinstance(q, exp.Select):
        raise NotSupported(f"Unsupported subquery: {q.sql(dialect='doris')[:80]}")
    return q


class _Keys:
    """The distinct outer columns a subquery reads, as D's columns __o0, __o1, ...; and the
    outer sides of its correlation equalities that are expressions (`x.k = t.k + 1`), as D's
    columns __e0, __e1, ... (so that the equality is a hash join key of D and the subquery)."""

    def __init__(self, refs: list[tuple[exp.Column, ScopeColumn]]):
        self.columns: list[ScopeColumn] = []
        self.of_node: dict[int, int] = {}
        self.derived: list[exp.Expression] = []   # over the outer FROM's columns
        self.derived_of_node: dict[int, int] = {}
        for col, sc in refs:
            i = next((i for i, c in enumerate(self.columns) if c.internal == sc.internal), None)
            if i is None:
                i = len(self.columns)
                self.columns.append(sc)
            self.of_node[id(col)] = i

    def names(self) -> list[str]:
        return [f"__o{i}" for i in range(len(self.columns))]

    def derive_equalities(self, query: exp.Select) -> None:
        """The outer-only expression sides of `query`'s WHERE equalities become D columns."""
        where = query.args.get("where")
        for conj in conjuncts(where.this if where else None):
            if not isinstance(conj, exp.EQ):
                continue
            for outer_side, inner_side in ((conj.this, conj.expression),
                                           (conj.expression, conj.this)):
                cols = list(outer_side.find_all(exp.Column))
                if isinstance(outer_side, exp.Column) or not cols \
                        or not all(id(c) in self.of_node for c in cols) \
                        or outer_side.find(exp.Query, exp.AggFunc, exp.Subquery) \
                        or any(id(c) in self.of_node for c in inner_side.find_all(exp.Column)):
                    continue
                self.derived_of_node[id(outer_side)] = len(self.derived)
                self.derived.append(self._qualified(outer_side))

    def _qualified(self, e: exp.Expression) -> exp.Expression:
        copy = e.copy()
        pairs = list(zip(e.find_all(exp.Column), copy.find_all(exp.Column)))
        for orig, new in pairs:
            sc = self.columns[self.of_node[id(orig)]]
            new.replace(exp.column(sc.name, sc.relation))
        return copy

    def replace(self, e: exp.Expression, relation: str) -> exp.Expression:
        """A copy of `e` (whose outer column nodes these are) reading D's columns of
        `relation` instead."""
        if id(e) in self.of_node:
            return exp.column(f"__o{self.of_node[id(e)]}", relation)
        copy = e.copy()
        pairs = list(zip(e.walk(), copy.walk()))
        for orig, new in pairs:
            i = self.derived_of_node.get(id(orig))
            if i is not None:
                new.replace(exp.column(f"__e{i}", relation))
        for orig, new in pairs:
            i = self.of_node.get(id(orig))
            if i is not None and isinstance(orig, exp.Column):
                new.replace(exp.column(f"__o{i}", relation))
        return copy


def _d_query(keys: _Keys, outer_select: exp.Select) -> exp.Select:
    """D: the distinct values of the outer columns over the outer FROM (and the WHERE's
    conjuncts that read only it)."""
    d = exp.select(*[_as(exp.column(c.name, c.relation), f"__o{i}")
                     for i, c in enumerate(keys.columns)],
                   *[_as(e.copy(), f"__e{i}") for i, e in enumerate(keys.derived)]).distinct()
    from_ = outer_select.args.get("from_")
    if from_ is not None:
        d.set("from_", from_.copy())
        d.set("joins", [j.copy() for j in outer_select.args.get("joins") or []])
    where = outer_select.args.get("where")
    kept = [c.copy() for c in conjuncts(where.this if where else None)
            if not c.find(exp.Query, exp.Exists, exp.Subquery)
            and not any(col.name.startswith("__") or (col.table or "").startswith("__")
                        for col in c.find_all(exp.Column))]
    if kept:
        d.set("where", exp.Where(this=exp.and_(*kept)))
    return d


def _with_d(q: exp.Select, keys: _Keys, d: exp.Select, alias: str, ctx) -> tuple[exp.Select, str]:
    """`q` (a copy, changed in place) joined with D, and the relation of `q`'s FROM that then
    holds D's columns: D cross-joined first in its FROM, as `alias`; or, when a derived table
    of the FROM reads D's columns itself (a correlated UNION, say), that derived table computed
    per D row (`_pushed`), its own D columns read where `q` read D's."""
    items = [q.args["from_"]] if q.args.get("from_") is not None else []
    items += list(q.args.get("joins") or [])
    derived = [i.this for i in items if isinstance(i.this, exp.Subquery)
               and any(c.table == alias for c in i.this.this.find_all(exp.Column))]
    if len(derived) > 1:
        raise NotSupported("A correlated subquery whose FROM has several derived tables reading "
                           "the outer query is not supported yet")
    if derived:
        holder = derived[0].alias
        for col in list(q.find_all(exp.Column)):
            if col.table == alias and not under(col, derived[0]):
                col.set("table", exp.to_identifier(holder))
        derived[0].set("this", _pushed(derived[0].this, keys, d, alias, ctx))
        return q, holder
    from_ = q.args.get("from_")
    joins = list(q.args.get("joins") or [])
    if from_ is not None:
        joins.insert(0, exp.Join(this=from_.this, kind="CROSS"))
    q.set("from_", exp.From(this=d.subquery(alias)))
    q.set("joins", joins)
    return q, alias


def _pushed(body: exp.Expression, keys: _Keys, d: exp.Select, d_alias: str, ctx) -> exp.Query:
    """The derived table `body`, which reads D's columns, per D row: each SELECT of it (each
    branch of a set operation) with D joined in, its columns named as before, plus D's columns
    __o0..: a set operation of such rows is then one per D row."""
    while isinstance(body, exp.Subquery):
        body = body.this
    if isinstance(body, SET_OPERATIONS):
        if any(body.args.get(a) for a in ("order", "limit", "offset")):
            return _pushed(_over_set_operation(body, ctx.names.new("__s")), keys, d, d_alias, ctx)
        out = body.copy()
        out.set("this", _pushed(body.this, keys, d, d_alias, ctx))
        out.set("expression", _pushed(body.expression, keys, d, d_alias, ctx))
        return out
    if not isinstance(body, exp.Select):
        raise NotSupported(f"Unsupported subquery: {body.sql(dialect='doris')[:80]}")
    names: list[str] = []
    r = rows(body, keys, d, d_alias, ctx, names)
    r_alias = ctx.names.new("__p")
    return exp.select(*[_as(exp.column(f"__v{i}", r_alias), n) for i, n in enumerate(names)],
                      *[_as(exp.column(n, r_alias), n) for n in keys.names()]
                      ).from_(r.subquery(r_alias))


# -- the rows of the subquery per outer key (R) --------------------------------------------------
def _items(query: exp.Select, ctx, names: list[str] | None = None) -> list[exp.Expression]:
    """The select list with `*` expanded (never to D's columns); their output names are
    appended to `names` when given."""
    from planner.binder import from_scope
    out = []
    for e in query.expressions:
        target = e.this if isinstance(e, exp.Alias) else e
        if isinstance(target, exp.Star) or (isinstance(target, exp.Column)
                                            and isinstance(target.this, exp.Star)):
            rel = target.table if isinstance(target, exp.Column) else None
            cols = [c for c in from_scope(query, ctx).star(rel or None)
                    if not _KEY_COLUMN.match(c.name)]
            out += [exp.column(c.name, c.relation) for c in cols]
            if names is not None:
                names += [c.name for c in cols]
        else:
            out.append(target)
            if names is not None:
                names.append(e.alias_or_name)
    return out


def _aggregates(e: exp.Expression) -> list[exp.AggFunc]:
    from planner.subqueries import own_nodes
    return [a for a in own_nodes(e, exp.AggFunc)
            if not (isinstance(a.parent, exp.Window) and a.arg_key == "this")]


def rows(q: exp.Select, keys: _Keys, d: exp.Select | None, d_alias: str, ctx,
         names: list[str] | None = None) -> exp.Select:
    """R: SELECT <the subquery's values> AS __v0.., <D's columns> AS __o0.. per D row; `q`
    already reads D's columns (as `d_alias`) for the outer ones. The values' own names are
    appended to `names` when given."""
    from planner.subqueries import is_aggregating
    key_alias = d_alias
    if d is not None:
        q, key_alias = _with_d(q.copy(), keys, d, d_alias, ctx)
    items = _items(q, ctx, names)
    if is_aggregating(q) and not q.args.get("group"):
        return _aggregate_rows(q, items, keys, d, d_alias, key_alias)
    limit, offset, order = q.args.get("limit"), q.args.get("offset"), q.args.get("order")
    r = q.copy()
    r.set("expressions", [_as(e.copy(), f"__v{i}") for i, e in enumerate(items)])
    for arg in ("order", "limit", "offset"):
        r.set(arg, None)
    if d is not None:
        _partition_windows(r, [exp.column(n, key_alias) for n in keys.names()])
        r.set("expressions", r.expressions + [_as(exp.column(n, key_alias), n)
                                              for n in keys.names()])
        group = r.args.get("group")
        if group is not None:
            group.set("expressions", list(group.expressions)
                      + [exp.column(n, key_alias) for n in keys.names()])
    if limit is None and offset is None:
        return r
    if r.args.get("distinct"):
        raise NotSupported("DISTINCT with LIMIT in a correlated subquery is not supported yet")
    window = exp.Window(this=exp.RowNumber(),
                        partition_by=[exp.column(n, key_alias) for n in keys.names()] or None,
                        order=_window_order(order, items))
    r.set("expressions", r.expressions + [_as(window, "__rn")])
    lo, hi = _bounds(limit, offset)
    cond = exp.GT(this=exp.column("__rn"), expression=exp.Literal.number(lo))
    if hi is not None:
        cond = exp.and_(cond, exp.LTE(this=exp.column("__rn"), expression=exp.Literal.number(hi)))
    names = [f"__v{i}" for i in range(len(items))] + keys.names()
    return exp.select(*names).from_(r.subquery(ctx.names.new("__rw"))).where(cond)


def _partition_windows(r: exp.Select, keys: list[exp.Column]) -> None:
    """Each window function of `r`'s select list also partitioned by D's columns: it sees the
    rows of one outer row, as in the subquery evaluated for that row alone."""
    from planner.subqueries import own_nodes
    for e in r.expressions:
        for w in own_nodes(e, exp.Window):
            w.set("partition_by", list(w.args.get("partition_by") or []) + [k.copy() for k in keys])


def _bounds(limit, offset) -> tuple[int, int | None]:
    def value(node) -> int:
        v = node.expression if isinstance(node, (exp.Limit, exp.Offset)) else node
        if not (isinstance(v, exp.Literal) and not v.is_string):
            raise AnalysisError("LIMIT/OFFSET must be integer constants")
        return int(v.this)
    lo = value(offset) if offset is not None else 0
    if isinstance(limit, exp.Limit) and limit.args.get("offset") is not None:
        lo = value(limit.args["offset"])
    return lo, None if limit is None else lo + value(limit)


def _window_order(order, items: list[exp.Expression]) -> exp.Order | None:
    """The subquery's ORDER BY for ROW_NUMBER() (ordinals resolved to expressions)."""
    if order is None:
        return None
    out = []
    for o in order.expressions:
        e = o.this
        if isinstance(e, exp.Literal) and not e.is_string and 1 <= int(e.this) <= len(items):
            e = items[int(e.this) - 1]
        o = o.copy()
        o.set("this", e.copy())
        out.append(o)
    return exp.Order(expressions=out)


def _aggregate_rows(q: exp.Select, items: list[exp.Expression], keys: _Keys,
                    d: exp.Select | None, d_alias: str, key_alias: str) -> exp.Select:
    """An aggregate without GROUP BY: one row per D row, also where no inner row matches
    (the aggregates A grouped by D's columns, left-joined to D; COUNT -> 0)."""
    having = q.args.get("having")
    aggs = [a for e in items + ([having.this] if having else []) for a in _aggregates(e)]
    limit = q.args.get("limit")
    lo, hi = _bounds(limit, q.args.get("offset")) if limit is not None else (0, None)
    a = q.copy()
    a.set("expressions", [_as(x.copy(), f"__a{i}") for i, x in enumerate(aggs)])
    for arg in ("having", "order", "limit", "offset", "distinct"):
        a.set(arg, None)
    a_alias = d_alias + "a"
    if d is None:
        value_of = {id(x): exp.column(f"__a{i}", a_alias) for i, x in enumerate(aggs)}
        r = exp.select().from_(a.subquery(a_alias))
    else:
        a.set("expressions", a.expressions + [_as(exp.column(n, key_alias), n)
                                              for n in keys.names()])
        a.set("group", exp.Group(expressions=[exp.column(n, key_alias) for n in keys.names()]))
        on = exp.and_(*[exp.NullSafeEQ(this=exp.column(n, d_alias), expression=exp.column(n, a_alias))
                        for n in keys.names()])
        value_of = {id(x): exp.Coalesce(this=exp.column(f"__a{i}", a_alias),
                                        expressions=[exp.Literal.number(0)])
                    if isinstance(x, _COUNTS) else exp.column(f"__a{i}", a_alias)
                    for i, x in enumerate(aggs)}
        r = exp.select().from_(d.subquery(d_alias)).join(a.subquery(a_alias), on=on,
                                                         join_type="LEFT")
    exprs = [_as(_replaced(e, value_of), f"__v{i}") for i, e in enumerate(items)]
    exprs += [_as(exp.column(n, d_alias), n) for n in keys.names()] if d is not None else []
    r.set("expressions", exprs)
    cond = _replaced(having.this, value_of) if having is not None else None
    if lo > 0 or hi == 0:
        cond = exp.false()
    if cond is not None:
        r.set("where", exp.Where(this=cond))
    return r


def _replaced(e: exp.Expression, value_of: dict) -> exp.Expression:
    """A copy of `e` with the nodes whose ids `value_of` maps replaced."""
    if id(e) in value_of:
        return value_of[id(e)].copy()
    copy = e.copy()
    pairs = [(o, n) for o, n in zip(e.walk(), copy.walk()) if id(o) in value_of]
    for orig, new in pairs:
        new.replace(value_of[id(orig)].copy())
    return copy


# -- the subquery expression as a join (S) -------------------------------------------------------
def apply_subquery(node: exp.Expression, outer_select: exp.Select, scope: Scope, ctx
                   ) -> tuple[list[SubqueryJoin], exp.Expression]:
    """Relations to join to the outer FROM for the subquery expression `node` (a scalar
    Subquery, Exists, In or an ANY/ALL comparison), and the expression replacing it; the
    relations' columns are added to `scope` (hidden from `*`)."""
    query = _query_of(node)
    x = op = None
    quantifier = "any"
    if isinstance(node, exp.In):
        x, op = node.this, exp.EQ
    elif is_apply_node(node):
        x, op = node.this, type(node)
        quantifier = "all" if isinstance(node.expression, exp.All) else "any"
    if x is not None and x.find(exp.Query, exp.Exists, exp.Subquery):
        raise NotSupported("A subquery on the left of IN / ANY / ALL is not supported yet")
    refs = outer_refs(query, scope, ctx)
    x_refs = [(c, scope.lookup(c.name, c.table or None)) for c in
              (x.find_all(exp.Column) if x is not None else [])]
    if not refs and op is exp.EQ and quantifier == "any" and isinstance(x, exp.Column):
        return _uncorrelated_in(query, x, scope, ctx)
    keys = _Keys(refs + x_refs)
    keys.derive_equalities(query)
    d_alias = ctx.names.new("__d")
    d = _d_query(keys, outer_select) if keys.columns else None
    r = rows(keys.replace(query, d_alias), keys, d, d_alias, ctx)
    width = sum(1 for e in r.expressions if e.alias_or_name.startswith("__v"))
    r_alias = ctx.names.new("__r")
    group = [exp.column(n, r_alias) for n in keys.names()]
    s = exp.select(*[_as(c.copy(), c.name) for c in group]).from_(r.subquery(r_alias))
    if group:
        s.set("group", exp.Group(expressions=[c.copy() for c in group]))
    one = exp.Literal.number(1)
    if isinstance(node, exp.Subquery):
        if width != 1:
            raise AnalysisError("Operand should contain 1 column(s)")
        s.select(_as(exp.Max(this=exp.column("__v0", r_alias)), "__v"),
                 _as(exp.Count(this=exp.Star()), "__n"), copy=False)
    elif isinstance(node, exp.Exists):
        s.select(_as(exp.Count(this=exp.Star()), "__n"), copy=False)
    else:
        cond = _comparison(x, op, keys, r_alias, width)
        s.select(_as(_count_if(cond), "__t"),
                 _as(_count_if(exp.Not(this=exp.Paren(this=cond.copy()))), "__f"),
                 _as(exp.Count(this=exp.Star()), "__n"), copy=False)
    join, col = _bind_join(s, keys, scope, ctx)
    if isinstance(node, exp.Subquery):
        value = exp.If(this=exp.GT(this=col("__n"), expression=one),
                       true=exp.Anonymous(this="__subquery_rows_error", expressions=[col("__n")]),
                       false=col("__v"))
    elif isinstance(node, exp.Exists):
        value = exp.GT(this=_zero_if_null(col("__n")), expression=exp.Literal.number(0))
    else:
        value = _quantified(quantifier, _zero_if_null(col("__t")), _zero_if_null(col("__f")),
                            _zero_if_null(col("__n")))
    return [join], value


def _comparison(x: exp.Expression, op: type, keys: _Keys, r_alias: str, width: int) -> exp.Expression:
    """`x op value` over R's columns (a row constructor compares member by member)."""
    xs = list(x.expressions) if isinstance(x, exp.Tuple) else [x]
    if len(xs) != width:
        raise AnalysisError(f"Operand should contain {len(xs)} column(s)")
    if len(xs) > 1 and op is not exp.EQ:
        raise NotSupported("A row constructor with ANY / ALL is not supported yet")
    return exp.and_(*[op(this=keys.replace(m, r_alias), expression=exp.column(f"__v{i}", r_alias))
                      for i, m in enumerate(xs)])


def _count_if(cond: exp.Expression) -> exp.Expression:
    return exp.Count(this=exp.Case(ifs=[exp.If(this=cond, true=exp.Literal.number(1))]))


def _zero_if_null(e: exp.Expression) -> exp.Expression:
    return exp.Coalesce(this=e, expressions=[exp.Literal.number(0)])


def _quantified(quantifier: str, t: exp.Expression, f: exp.Expression, n: exp.Expression
                ) -> exp.Expression:
    """ANY: TRUE if a comparison is TRUE, FALSE if all are FALSE (or none), else NULL;
    ALL: FALSE if a comparison is FALSE, TRUE if all are TRUE (or none), else NULL."""
    zero = exp.Literal.number(0)
    hit, miss = (t, f) if quantifier == "any" else (f, t)
    hit_value, miss_value = (exp.true(), exp.false()) if quantifier == "any" else \
        (exp.false(), exp.true())
    return exp.Case(ifs=[exp.If(this=exp.GT(this=hit, expression=zero), true=hit_value),
                         exp.If(this=exp.EQ(this=miss, expression=n), true=miss_value)],
                    default=exp.Null())


def _bind_join(s: exp.Select, keys: _Keys, scope: Scope, ctx):
    """S bound as a derived table, its join to the outer rows (left outer on the keys with
    `<=>`, or a cross join of its one row), and a function naming its columns."""
    from planner.binder import bind_derived
    alias = ctx.names.new("__sq")
    dscope = Scope()
    plan = bind_derived(s, alias, dscope, ctx)
    for c in dscope.columns:
        c.hidden = True
    scope.columns.extend(dscope.columns)
    names = {c.internal for c in dscope.columns}
    if keys.columns:
        join = SubqueryJoin(plan, "left outer", [c.internal for c in keys.columns],
                            [dscope.lookup(n, alias).internal for n in keys.names()], names, alias,
                            null_safe=True)
    else:
        join = SubqueryJoin(plan, "cross", [], [], names, alias)
    return join, lambda name: exp.column(name, alias)


def _uncorrelated_in(query: exp.Select, x: exp.Column, scope: Scope, ctx
                     ) -> tuple[list[SubqueryJoin], exp.Expression]:
    """x IN (uncorrelated query), x a column: a left join of the outer rows against the
    distinct non-NULL values, and a one-row count of the values and the non-NULL ones."""
    r = rows(query.copy(), _Keys([]), None, "", ctx)
    if sum(1 for e in r.expressions if e.alias_or_name.startswith("__v")) != 1:
        raise AnalysisError("Operand should contain 1 column(s)")
    r_alias = ctx.names.new("__r")
    v = exp.column("__v0", r_alias)
    m = exp.select(_as(v.copy(), "__m")).distinct().from_(r.subquery(r_alias)) \
        .where(exp.Not(this=exp.Is(this=v.copy(), expression=exp.Null())))
    counts = exp.select(_as(exp.Count(this=exp.Star()), "__n"),
                        _as(exp.Count(this=v.copy()), "__nn")).from_(r.subquery(r_alias))
    from planner.binder import bind_derived
    m_alias = ctx.names.new("__sq")
    mscope = Scope()
    m_plan = bind_derived(m, m_alias, mscope, ctx)
    x_col = scope.lookup(x.name, x.table or None)
    joins = [SubqueryJoin(m_plan, "left outer", [x_col.internal],
                          [mscope.lookup("__m", m_alias).internal],
                          {c.internal for c in mscope.columns}, m_alias)]
    for c in mscope.columns:
        c.hidden = True
    scope.columns.extend(mscope.columns)
    count_join, col = _bind_join(counts, _Keys([]), scope, ctx)
    joins.append(count_join)
    hit = exp.Not(this=exp.Is(this=exp.column("__m", m_alias), expression=exp.Null()))
    value = exp.Case(ifs=[
        exp.If(this=hit, true=exp.true()),
        exp.If(this=exp.EQ(this=col("__n"), expression=exp.Literal.number(0)), true=exp.false()),
        exp.If(this=exp.or_(exp.Is(this=x.copy(), expression=exp.Null()),
                            exp.LT(this=col("__nn"), expression=col("__n"))), true=exp.Null())],
        default=exp.false())
    return joins, value
