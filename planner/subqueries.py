"""Subqueries become joins, as Doris rewrites them (SubqueryToApply, then decorrelation).

  x [NOT] IN (SELECT c ...)         uncorrelated: semi / null-aware anti join on x = c
  x IN (SELECT c ... WHERE inner.k = outer.k ...)
                                    semi join on x = c and the correlation equalities
  x NOT IN (SELECT c ... WHERE inner.k = outer.k ...)
                                    anti join on the equalities, NULL-aware residual (below)
  [NOT] EXISTS (SELECT ... WHERE inner.k = outer.k AND inner.s <> outer.s ...)
                                    semi / anti join on the equalities; the other correlated
                                    conditions are the join's residual (decided per key-matched
                                    pair, see executor/operators/join.py)
  EXISTS (SELECT ...) uncorrelated  a one-row count of (SELECT ... LIMIT 1), tested > 0
  (SELECT ...) uncorrelated         a one-row relation (ScalarSubquery) cross-joined in; in the
                                    select list / HAVING / ORDER BY of an aggregating SELECT it
                                    is joined above the aggregation: a constant there, not an
                                    ungrouped column
  (SELECT agg(..) ... WHERE inner.k = outer.k ...)
                                    a derived table of the aggregates grouped by inner.k, joined
                                    on outer.k: an inner join when the WHERE conjunct using it
                                    rejects NULL, else a left outer join (no rows -> NULL, and
                                    COUNT -> 0)

A correlated subquery's WHERE is split (`_split`) into conjuncts on its own FROM, which stay in
the derived table, and conjuncts reading outer columns; the inner columns those read become
columns of the derived table (`__kN` keys, `__cN` residual inputs, `__vN` values), which are
hidden from `*`. Any other shape goes to planner/apply_subqueries.py (evaluated per distinct
outer value); one found only while planning a WHERE conjunct raises `NeedsUnnest`, and the
binder plans the SELECT again with every subquery expression sent there (`force`).

A correlated `x NOT IN (SELECT c ...)` is an anti join on the correlation equalities with the
residual `x = c OR x IS NULL OR c IS NULL` (MySQL's NULL semantics per outer row); one
correlated by non-equalities only goes to planner/apply_subqueries.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from catalog.errors import AnalysisError, NotSupported, UnknownColumn
from planner import logical as L
from planner.naming import output_name
from planner.scope import Scope, ScopeColumn, conjuncts


class NeedsUnnest(Exception):
    """A subquery shape planned here is not: plan every subquery expression of the SELECT
    through planner/apply_subqueries.py (`force`)."""


class NeedsAggregateSplit(Exception):
    """A correlated subquery above an aggregation: plan the aggregation as a derived table
    first (planner/split_aggregation.py)."""


@dataclass
class SubqueryJoin:
    """A relation made from a subquery, to join to the FROM of the SELECT using it."""

    plan: object
    kind: str                    # cross (one row), inner or left outer (on the keys)
    left_keys: list[str]         # outer columns
    right_keys: list[str]
    names: set[str]              # the columns it adds
    relation: str                # its alias
    null_safe: bool = False      # keys compared with <=> (planner/apply_subqueries.py)

    def join(self, left: object) -> L.Join:
        return L.Join(left, self.plan, self.kind, list(self.left_keys), list(self.right_keys),
                      null_safe=self.null_safe)


@dataclass
class SemiJoin:
    """A WHERE conjunct planned as a semi / anti join of the FROM against a subquery."""

    kind: str
    plan: object
    left_keys: list[str]
    right_keys: list[str]
    residual: exp.Expression | None = None

    def join(self, left: object) -> L.Join:
        return L.Join(left, self.plan, self.kind, self.left_keys, self.right_keys, self.residual)

    def join_swapped(self, outer: object) -> L.Join:
        """The same join with the subquery as the left side: `left semi` becomes `right semi`,
        `left anti` becomes `right anti` (not for the NULL-aware anti join of NOT IN)."""
        kind = {"left semi": "right semi", "left anti": "right anti"}[self.kind]
        return L.Join(self.plan, outer, kind, self.right_keys, self.left_keys, self.residual)


_ARITHMETIC = (exp.Paren, exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Neg, exp.Cast)
_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)
_NULL_PROPAGATING = _ARITHMETIC + (exp.Column, exp.Identifier, exp.Literal, exp.DataType)
_COUNTS = (exp.Count, exp.ApproxDistinct)  # 0, not NULL, over no rows


def own_nodes(e: exp.Expression, *types):
    """The nodes of `e` of the given types, outside nested subqueries."""
    stack = [e]
    while stack:
        node = stack.pop()
        if isinstance(node, types):
            yield node
        for value in node.args.values():
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, exp.Expression) and not isinstance(child, exp.Query):
                    stack.append(child)


def is_aggregating(select: exp.Select) -> bool:
    """GROUP BY, or an aggregate call (not a window's) of the SELECT itself."""
    if select.args.get("group"):
        return True
    parts = list(select.expressions) + [select.args.get(k) for k in ("having", "order")]
    return any(not (isinstance(a.parent, exp.Window) and a.arg_key == "this")
               for p in parts if p is not None for a in own_nodes(p, exp.AggFunc))


# -- splitting a correlated subquery ----------------------------------------------------------
@dataclass
class _Split:
    inner_where: list[exp.Expression]
    keys: list[tuple[exp.Expression, exp.Expression]]  # (outer side, inner side) of equalities
    residual: list[exp.Expression]                      # other conjuncts reading outer columns
    inner: Scope

    @property
    def correlated(self) -> bool:
        return bool(self.keys or self.residual)


def _is_inner(col: exp.Column, inner: Scope, outer: Scope) -> bool:
    try:
        inner.lookup(col.name, col.table or None)
        return True
    except UnknownColumn:
        pass
    try:
        outer.lookup(col.name, col.table or None)
    except UnknownColumn:
        raise NeedsUnnest() from None  # a column of a SELECT further out (or unknown)
    return False


def _split(sub: exp.Select, outer: Scope, ctx) -> _Split:
    from planner import binder
    try:
        inner = binder.from_scope(sub, ctx)
    except UnknownColumn:
        raise NeedsUnnest() from None
    where = sub.args.get("where")
    split = _Split([], [], [], inner)
    for conj in conjuncts(where.this if where else None):
        if conj.find(exp.Query, exp.Exists):
            split.inner_where.append(conj)  # a nested subquery: only its own FROM may be read
            continue
        sides = {id(c): _is_inner(c, inner, outer) for c in own_nodes(conj, exp.Column)}
        if all(sides.values()):
            split.inner_where.append(conj)
            continue
        if isinstance(conj, exp.EQ):
            a = [sides[id(c)] for c in own_nodes(conj.this, exp.Column)]
            b = [sides[id(c)] for c in own_nodes(conj.expression, exp.Column)]
            if a and b and not any(a) and all(b):
                split.keys.append((conj.this, conj.expression))
                continue
            if a and b and all(a) and not any(b):
                split.keys.append((conj.expression, conj.this))
                continue
        split.residual.append(conj)
    return split


def _derived(sub: exp.Select, split: _Split, items: list[tuple[str, exp.Expression]],
             outer: Scope, ctx, group: bool):
    """The subquery as a derived table of `items`, its keys and residual inputs; returns
    (plan, its scope, alias, left keys, right keys, residual bound over outer + derived)."""
    from planner import binder
    alias = ctx.names.new("__sq")
    items = list(items)
    for i, (_, inner) in enumerate(split.keys):
        items.append((f"__k{i}", inner.copy()))
    inputs: dict[str, str] = {}

    def to_input(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Column) and _is_inner(node, split.inner, outer):
            text = node.sql()
            if text not in inputs:
                inputs[text] = f"__c{len(inputs)}"
                items.append((inputs[text], node.copy()))
            return exp.column(inputs[text], alias)
        return node

    residual = [c.copy().transform(to_input) for c in split.residual]
    derived = sub.copy()
    derived.set("expressions", [exp.alias_(e, name) for name, e in items])
    where = exp.Where(this=exp.and_(*split.inner_where)) if split.inner_where else None
    derived.set("where", where)
    for arg in ("order", "limit", "offset", "distinct"):
        derived.set(arg, None)
    if group:
        derived.set("group", exp.Group(expressions=[inner.copy() for _, inner in split.keys]))
    scope = Scope()
    try:
        plan = binder.bind_derived(derived, alias, scope, ctx)
    except UnknownColumn:
        raise NeedsUnnest() from None
    for c in scope.columns:
        c.hidden = True
    left_keys = []
    for outer_side, _ in split.keys:
        bound = outer.bind(outer_side)
        if not isinstance(bound, exp.Column):
            raise NeedsUnnest()
        left_keys.append(bound.name)
    right_keys = [scope.lookup(f"__k{i}", alias).internal for i in range(len(split.keys))]
    bound_residual = (Scope(outer.columns + scope.columns).bind(exp.and_(*residual))
                      if residual else None)
    return plan, scope, alias, left_keys, right_keys, bound_residual


# -- WHERE conjuncts: IN and EXISTS as semi / anti joins ---------------------------------------
def where_subquery(conj: exp.Expression, outer: Scope, ctx) -> SemiJoin | None:
    """A bound WHERE conjunct `[NOT] EXISTS (...)` (correlated) or `x [NOT] IN (SELECT ...)` as
    a semi / anti join; None for any other conjunct."""
    negated = isinstance(conj, exp.Not)
    node = conj.this if negated else conj
    if isinstance(node, exp.Exists):
        return _exists_join(node.this, negated, outer, ctx)
    if not (isinstance(node, exp.In) and node.args.get("query") is not None):
        return None
    if not isinstance(node.this, exp.Column):
        raise NeedsUnnest()  # planner/apply_subqueries.py
    query = node.args["query"]
    sub = query.this if isinstance(query, exp.Subquery) else query
    if isinstance(sub, exp.Select):
        split = _split(sub, outer, ctx)
        if split.correlated:
            return _correlated_in(sub, split, node.this.name, negated, outer, ctx)
    from planner.binder import bind_query
    try:
        sub_plan, cols = bind_query(sub, ctx)
    except UnknownColumn:
        raise NeedsUnnest() from None
    if len(cols) != 1:
        raise AnalysisError("Operand should contain 1 column(s)")
    kind = "null aware left anti" if negated else "left semi"
    return SemiJoin(kind, sub_plan, [node.this.name], [cols[0].internal])


def _plain(sub: exp.Select) -> bool:
    """No grouping or aggregation, and a LIMIT (if any) that keeps some row."""
    limit = sub.args.get("limit")
    if limit is not None:
        value = limit.expression if isinstance(limit, exp.Limit) else limit
        if not (isinstance(value, exp.Literal) and not value.is_string and int(value.this) > 0):
            return False
    return not is_aggregating(sub) and sub.args.get("offset") is None


def _exists_join(sub: exp.Expression, negated: bool, outer: Scope, ctx) -> SemiJoin:
    if not isinstance(sub, exp.Select) or not _plain(sub):
        raise NeedsUnnest()
    split = _split(sub, outer, ctx)
    if not split.keys:
        raise NeedsUnnest()  # uncorrelated EXISTS is a scalar (see plan_scalar_subqueries)
    plan, _, _, lkeys, rkeys, residual = _derived(sub, split, [], outer, ctx, group=False)
    return SemiJoin("left anti" if negated else "left semi", plan, lkeys, rkeys, residual)


def _correlated_in(sub: exp.Select, split: _Split, column: str, negated: bool, outer: Scope,
                   ctx) -> SemiJoin:
    if not _plain(sub) or len(sub.expressions) != 1 or isinstance(sub.expressions[0], exp.Star) \
            or sub.args.get("limit") is not None:
        raise NeedsUnnest()  # a LIMIT picks rows per outer row: planner/apply_subqueries.py
    item = sub.expressions[0]
    item = item.this if isinstance(item, exp.Alias) else item
    plan, scope, alias, lkeys, rkeys, residual = _derived(
        sub, split, [("__v0", item.copy())], outer, ctx, group=False)
    value = scope.lookup("__v0", alias).internal
    if not negated:
        return SemiJoin("left semi", plan, [column] + lkeys, [value] + rkeys, residual)
    if not lkeys:
        raise NeedsUnnest()  # no equality to anti-join on: planner/apply_subqueries.py
    # NOT IN per outer row: removed by a correlated row whose value equals x or is NULL, and
    # by any correlated row when x is NULL (MySQL's NULL semantics, Doris's null-aware anti).
    x, v = exp.column(column, quoted=True), exp.column(value, quoted=True)
    null_aware = exp.or_(exp.EQ(this=x, expression=v), exp.Is(this=x.copy(), expression=exp.Null()),
                         exp.Is(this=v.copy(), expression=exp.Null()))
    residual = exp.and_(residual, null_aware) if residual is not None else null_aware
    return SemiJoin("left anti", plan, lkeys, rkeys, residual)


# -- scalar subqueries (and uncorrelated EXISTS) anywhere in the SELECT -------------------------
def plan_scalar_subqueries(select: exp.Select, scope: Scope, ctx, force: bool = False
                           ) -> tuple[exp.Select, list[SubqueryJoin], list[SubqueryJoin]]:
    """The SELECT with each subquery expression replaced by columns of relations to join:
    those to join to the FROM, and those to cross-join above the aggregation. The relations'
    columns are added to `scope` (hidden from `*`). WHERE conjuncts `[NOT] EXISTS` and
    `x [NOT] IN (SELECT ...)` stay for `where_subquery` unless `force`; the shapes planned
    nowhere else go to planner/apply_subqueries.py (all of them with `force`)."""
    from planner.apply_subqueries import apply_subquery
    if not _scalar_nodes(select, force):
        return select, [], []
    select = select.copy()
    for item in select.expressions:  # keep the output names the subqueries give
        if not isinstance(item, exp.Alias) and item.find(exp.Subquery, exp.Exists, exp.Any, exp.All):
            item.replace(exp.Alias(this=item.copy(), alias=exp.to_identifier(output_name(item))))
    aggregating = is_aggregating(select)
    where = select.args.get("where")
    before: list[SubqueryJoin] = []
    after: list[SubqueryJoin] = []
    for node in _scalar_nodes(select, force):
        # In WHERE or in an aggregate's argument: evaluated per row, below the aggregation.
        in_where = where is not None and under(node, where) or _in_aggregate(node, select)
        joined = None
        if isinstance(node, exp.Exists):
            joined = _uncorrelated_exists(node, scope, ctx)
            if joined is None and not force and in_where and _top_conjunct(node, where, True):
                continue  # a semi / anti join (where_subquery)
        elif isinstance(node, exp.Subquery):
            joined = _uncorrelated_scalar(node, scope, ctx)
            if joined is None and not force and not (aggregating and not in_where):
                try:
                    joined = _correlated_scalar(node, scope, ctx,
                                                in_where and _null_rejected(node, where))
                except NeedsUnnest:
                    pass
        if joined is not None:
            join, replacement = joined
            (after if aggregating and not in_where and join.kind == "cross" else before).append(join)
            node.replace(replacement)
            continue
        if aggregating and not in_where:
            raise NeedsAggregateSplit()
        joins, replacement = apply_subquery(node, select, scope, ctx)
        before += joins
        node.replace(replacement)
    return select, before, after


def _scalar_nodes(select: exp.Select, force: bool = False) -> list[exp.Expression]:
    """The subquery expressions of `select` itself (not of nested SELECTs, not derived
    tables), except the WHERE conjuncts `where_subquery` plans (unless `force`)."""
    from planner.apply_subqueries import is_apply_node
    where = select.args.get("where")
    out = []
    for n in select.find_all(exp.Subquery, exp.Exists, exp.In, *_COMPARISONS, exp.NullSafeEQ):
        if n.parent_select is not select:
            continue
        if isinstance(n, (exp.In, *_COMPARISONS, exp.NullSafeEQ)):
            if not is_apply_node(n):
                continue
            if isinstance(n, exp.In) and not force and where is not None \
                    and _top_conjunct(n, where, negation=True):
                continue
            out.append(n)
            continue
        if isinstance(n.parent, (exp.From, exp.Join, exp.Exists, exp.Any, exp.All)) \
                or (isinstance(n.parent, exp.In) and n.arg_key == "query"):
            continue
        if isinstance(n, exp.Subquery) and not isinstance(n.this, exp.Query):
            continue  # a parenthesized join
        out.append(n)
    return out


def _in_aggregate(node: exp.Expression, select: exp.Select) -> bool:
    parent = node.parent
    while parent is not None and parent is not select:
        if isinstance(parent, exp.AggFunc) and not (isinstance(parent.parent, exp.Window)
                                                    and parent.arg_key == "this"):
            return True
        parent = parent.parent
    return False


def under(node: exp.Expression, ancestor: exp.Expression) -> bool:
    """`ancestor` is `node` or one of its parents."""
    while node is not None:
        if node is ancestor:
            return True
        node = node.parent
    return False


def _top_conjunct(node: exp.Expression, where: exp.Where, negation: bool = False) -> bool:
    """`node` is one of the AND-ed conjuncts of WHERE (or, with `negation`, NOT of one)."""
    parent = node.parent
    if negation and isinstance(parent, exp.Not):
        parent = parent.parent
    while isinstance(parent, (exp.And, exp.Paren)):
        parent = parent.parent
    return parent is where


def _null_rejected(node: exp.Expression, where: exp.Where) -> bool:
    """A NULL in place of `node` makes its WHERE conjunct false (so an inner join is exact)."""
    parent = node
    while isinstance(parent.parent, _ARITHMETIC):
        parent = parent.parent
    return isinstance(parent.parent, _COMPARISONS) and _top_conjunct(parent.parent, where)


def _one_row(plan: object, cols: list, scope: Scope, ctx) -> tuple[SubqueryJoin, exp.Column]:
    if len(cols) != 1:
        raise AnalysisError("Operand should contain 1 column(s)")
    alias = ctx.names.new("__sq")
    internal = f"{alias}.{alias}"
    scope.columns.append(ScopeColumn(alias, alias, internal, cols[0].type, hidden=True))
    right = L.ScalarSubquery(L.Rename(plan, [cols[0].internal], [internal], relation=alias))
    return SubqueryJoin(right, "cross", [], [], {internal}, alias), exp.column(alias, alias)


def _uncorrelated_scalar(node: exp.Subquery, scope: Scope, ctx):
    from planner.binder import bind_query
    try:
        plan, cols = bind_query(node.this, ctx)
    except UnknownColumn:
        return None
    return _one_row(plan, cols, scope, ctx)


def _uncorrelated_exists(node: exp.Exists, scope: Scope, ctx):
    """EXISTS (q) as `(SELECT count(*) FROM (SELECT 1 FROM (q) LIMIT 1)) > 0`, or None when q
    reads outer columns."""
    from planner.binder import bind_query
    sub = node.this
    if not isinstance(sub, exp.Select):
        return None
    sub = sub.copy()
    if is_aggregating(sub):
        sub.set("expressions", [exp.alias_(e.this if isinstance(e, exp.Alias) else e, f"__x{i}")
                                for i, e in enumerate(sub.expressions)])
    else:
        sub.set("expressions", [exp.alias_(exp.Literal.number(1), "__x0")])
    probe = exp.select(exp.Literal.number(1)).from_(sub.subquery("__e0")).limit(1)
    count = exp.select(exp.Count(this=exp.Star())).from_(probe.subquery("__e1"))
    try:
        plan, cols = bind_query(count, ctx)
    except UnknownColumn:
        return None
    join, column = _one_row(plan, cols, scope, ctx)
    return join, exp.GT(this=column, expression=exp.Literal.number(0))


def _correlated_scalar(node: exp.Subquery, scope: Scope, ctx,
                       null_rejected: bool) -> tuple[SubqueryJoin, exp.Expression]:
    """(SELECT f(agg(..)) FROM .. WHERE inner.k = outer.k ..) as a derived table grouped by
    inner.k joined on outer.k; the subquery becomes f over the aggregates' columns."""
    sub = node.this
    if not isinstance(sub, exp.Select) or len(sub.expressions) != 1:
        if isinstance(sub, exp.Select):
            raise AnalysisError("Operand should contain 1 column(s)")
        raise NeedsUnnest()
    if any(sub.args.get(a) for a in ("group", "having", "limit", "offset", "distinct")):
        raise NeedsUnnest()
    split = _split(sub, scope, ctx)
    if not split.keys or split.residual:
        raise NeedsUnnest()
    item = sub.expressions[0]
    value = (item.this if isinstance(item, exp.Alias) else item).copy()
    aggregates = [a for a in own_nodes(value, exp.AggFunc)
                  if not (isinstance(a.parent, exp.Window) and a.arg_key == "this")]
    if not aggregates or next(own_nodes(value, exp.Window), None) is not None:
        raise NeedsUnnest()  # not one row per key
    items, counts = [], False
    for i, a in enumerate(aggregates):
        if any(not _is_inner(c, split.inner, scope) for c in own_nodes(a, exp.Column)):
            raise NeedsUnnest()
        items.append((f"__v{i}", a.copy()))
    plan, dscope, alias, lkeys, rkeys, _ = _derived(sub, split, items, scope, ctx, group=True)
    for i, a in enumerate(aggregates):
        column = exp.column(f"__v{i}", alias)
        counts |= isinstance(a, _COUNTS)
        replacement = exp.Coalesce(this=column, expressions=[exp.Literal.number(0)]) \
            if isinstance(a, _COUNTS) else column
        if a is value:
            value = replacement
        else:
            a.replace(replacement)
    for c in own_nodes(value, exp.Column):
        if c.table != alias and _is_inner(c, split.inner, scope):
            raise NeedsUnnest()  # an inner column outside the aggregates
    scope.columns.extend(dscope.columns)
    exact = null_rejected and not counts and all(isinstance(n, _NULL_PROPAGATING)
                                                  for n in own_nodes(value, exp.Expression))
    kind = "inner" if exact else "left outer"
    names = {c.internal for c in dscope.columns}
    return SubqueryJoin(plan, kind, lkeys, rkeys, names, alias), \
        value if isinstance(value, exp.Column) else exp.Paren(this=value)
