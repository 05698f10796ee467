"""Doris's aggregate functions that sqlglot leaves as plain function calls (`exp.Anonymous`):
`lift` turns them into `exp.AggFunc` nodes, so GROUP BY planning, ONLY_FULL_GROUP_BY checks and
window detection treat them as aggregates; `agg_call` gives their `AggCall`.

    ndv(x), approx_count_distinct(x)      count_distinct (exact; Doris estimates with HLL)
    bitmap_union_count(to_bitmap(x))      count_distinct(x)  (the UV-counting idiom)
    bitmap_union_int(x)                   count_distinct(x)
    bitmap_union_count(b), bitmap_union(b)  union of BITMAP values per group (count / BITMAP)
    group_bitmap_xor(b)                   the XOR of the group's BITMAP values
    hll_union_agg(hll_hash(x))            count_distinct(x)
    hll_union_agg(h), hll_union(h), hll_raw_agg(h)  union of HLL values (cardinality / HLL)
    group_bit_or(x), group_bit_and(x), group_bit_xor(x)  bitwise reductions (BIGINT);
                                          bit_and / bit_or / bit_xor are the same
    percentile(x, p), percentile_approx(x, p[, c]), median(x), percentile_cont(x, p)
                                          `DorisPercentile`: the p-quantile
                                          (executor/operators/aggregate_lists.py)
    count_if(c)                           COUNT(IF(c, 1, NULL))
    covar_pop(x, y), covar_samp(x, y), corr(x, y), covar(x, y) (= covar_pop)
                                          arithmetic over COUNT and SUMs of the pairs where
                                          both are non-NULL, in DOUBLE
    avg_weighted(x, w)                    SUM(x * w) / SUM(w) over the rows where neither is
                                          NULL, in DOUBLE
    bitmap_agg(x)                         bitmap_union(to_bitmap(x)): a BITMAP of the values
    window_funnel(w, mode, ts, c1, ...)   planner/window_funnel.py
    sequence_match / sequence_count       planner/sequence_match.py
    retention(c1, ..., cn)                array(MAX(c1) = 1, MAX(c1) = 1 AND MAX(c2) = 1, ...)
                                          over IF(ck, 1, 0): ARRAY<BOOLEAN>
    max_by(k, v), min_by(k, v)            sqlglot's ArgMax / ArgMin (aggregation.py)
    collect_list, array_agg, collect_set, topn, histogram, ...  planner/collect_aggregates.py
    kurt, skew, percentile_array, count_by_enum, topn_array, topn_weighted
                                          planner/more_aggregates.py
"""

from __future__ import annotations

from sqlglot import exp

from catalog.errors import AnalysisError
from planner import collect_aggregates, more_aggregates
from planner import logical as L
from planner.naming import output_name


class DorisAgg(exp.Expression, exp.AggFunc):
    """A Doris aggregate by name: `this` is the argument, `name_` the lower-case name."""

    arg_types = {"this": True, "name_": True}

    @property
    def doris_name(self) -> str:
        return self.args["name_"]

    def sql(self, dialect=None, **opts) -> str:  # how EXPLAIN and column names show it
        return f"{self.doris_name}({self.this.sql(dialect=dialect, **opts)})"


NAMES = {"ndv", "bitmap_union_count", "bitmap_union", "bitmap_union_int", "hll_union_agg",
         "hll_union", "hll_raw_agg", "group_bit_or", "group_bit_and", "group_bit_xor",
         "group_bitmap_xor"}


class DorisPercentile(exp.Expression, exp.AggFunc):
    """percentile / percentile_approx / median / percentile_cont: `this` the argument,
    `quantile` the level (a constant in [0, 1])."""

    arg_types = {"this": True, "quantile": True, "name_": True}

    @property
    def level(self) -> float:
        q = self.args["quantile"]
        if isinstance(q, exp.Neg) or not (isinstance(q, exp.Literal) and not q.is_string):
            raise AnalysisError(f"{self.args['name_']}: the percentile level must be a "
                                "constant between 0 and 1")
        value = float(q.this)
        if not 0 <= value <= 1:
            raise AnalysisError(f"percentile level must be in [0, 1], but got {q.this}")
        return value

    def sql(self, dialect=None, **opts) -> str:
        arg = self.this.sql(dialect=dialect, **opts)
        if self.args["name_"] == "median":
            return f"median({arg})"
        return f"{self.args['name_']}({arg}, {self.args['quantile'].sql(dialect=dialect, **opts)})"


_BIT_AGGS = {exp.BitwiseAndAgg: "group_bit_and", exp.BitwiseOrAgg: "group_bit_or",
             exp.BitwiseXorAgg: "group_bit_xor"}


def _double(e: exp.Expression) -> exp.Expression:
    return exp.Cast(this=e, to=exp.DataType.build("DOUBLE"))


def _covariance(node: exp.Expression) -> exp.Expression:
    """covar_pop / covar_samp / corr over the pairs where both arguments are non-NULL."""
    x, y = node.this, node.expression

    def paired(a, b):  # a, as DOUBLE, where b is not NULL
        return exp.If(this=exp.Is(this=b.copy(), expression=exp.Null()), true=exp.Null(),
                      false=_double(a.copy()))

    xp, yp = paired(x, y), paired(y, x)
    n = exp.Count(this=xp.copy())
    sx, sy = exp.Sum(this=xp.copy()), exp.Sum(this=yp.copy())

    def centred(a, b, sa, sb):  # sum((a - mean a) * (b - mean b))
        return exp.Sub(this=exp.Sum(this=exp.Mul(this=a.copy(), expression=b.copy())),
                       expression=exp.Div(this=exp.Mul(this=sa.copy(), expression=sb.copy()),
                                          expression=n.copy()))

    cross = exp.Paren(this=centred(xp, yp, sx, sy))
    if isinstance(node, exp.CovarPop):
        return exp.Div(this=cross, expression=n)
    if isinstance(node, exp.CovarSamp):
        return exp.Div(this=cross, expression=exp.Paren(
            this=exp.Sub(this=n, expression=exp.Literal.number(1))))
    spread = exp.Mul(this=exp.Paren(this=centred(xp, xp, sx, sx)),
                     expression=exp.Paren(this=centred(yp, yp, sy, sy)))
    return exp.Div(this=cross, expression=exp.Sqrt(this=spread))


def lift(tree: exp.Expression) -> exp.Expression:
    """The tree with Doris's aggregate calls as `DorisAgg` / `DorisPercentile` nodes, and the
    aggregates that are arithmetic over others rewritten (in place). A select item holding a
    rewritten call keeps the name the user's text gives it (`round(corr(k, v), 6)`)."""
    for select in list(tree.find_all(exp.Select)):
        items = select.expressions
        for i, item in enumerate(items):
            if not isinstance(item, exp.Alias) and any(
                    _rewrite(n) is not n for n in item.walk()):
                items[i] = exp.Alias(this=item, alias=exp.to_identifier(output_name(item)))
        select.set("expressions", items)
    return tree.transform(_rewrite, copy=False)


def _rewrite(node: exp.Expression) -> exp.Expression:
    """One call rewritten (see the module docstring), or the node itself."""
    collected = collect_aggregates.rewrite(node)  # collect_list, topn, histogram, ...
    if collected is not node:
        return collected
    grouped = more_aggregates.rewrite(node)  # kurt, skew, percentile_array, count_by_enum, ...
    if grouped is not node:
        return grouped
    name = str(node.this).lower() if isinstance(node, exp.Anonymous) else ""
    if name in NAMES and len(node.expressions) == 1:
        return DorisAgg(this=node.expressions[0], name_=name)
    if name in ("percentile", "percentile_approx") and len(node.expressions) in (2, 3):
        return DorisPercentile(this=node.expressions[0], quantile=node.expressions[1],
                               name_=name)
    if isinstance(node, exp.Median):
        return DorisPercentile(this=node.this, quantile=exp.Literal.number(0.5),
                               name_="median")
    if isinstance(node, exp.PercentileCont) and node.expression is not None:
        return DorisPercentile(this=node.this, quantile=node.expression,
                               name_="percentile_cont")
    if type(node) in _BIT_AGGS:
        return DorisAgg(this=node.this, name_=_BIT_AGGS[type(node)])
    if isinstance(node, exp.CountIf):
        return exp.Count(this=exp.If(this=node.this, true=exp.Literal.number(1),
                                     false=exp.Null()))
    if isinstance(node, (exp.CovarPop, exp.CovarSamp, exp.Corr)):
        return _covariance(node)
    if name == "covar" and len(node.expressions) == 2:
        return _covariance(exp.CovarPop(this=node.expressions[0],
                                        expression=node.expressions[1]))
    if name == "avg_weighted" and len(node.expressions) == 2:
        return _avg_weighted(*node.expressions)
    if name in ("sequence_match", "sequence_count"):
        from planner.sequence_match import lift_sequence_match
        return lift_sequence_match(node, name)
    if name == "retention":
        return _retention(node.expressions)
    if name == "window_funnel":
        from planner.window_funnel import lift_window_funnel
        return lift_window_funnel(node)
    if name == "bitmap_agg" and len(node.expressions) == 1:
        return DorisAgg(this=exp.Anonymous(this="to_bitmap", expressions=[node.expressions[0]]),
                        name_="bitmap_union")
    return node


def _retention(conds: list[exp.Expression]) -> exp.Expression:
    """retention(c1, ..., cn): [c1 held on some row, c1 and c2 each held on some row, ...,
    c1 and cn ...] as ARRAY<BOOLEAN> (Doris's Retention), from one MAX per condition."""
    if not 1 <= len(conds) <= 32:
        raise AnalysisError("The parameter length of retention function must be between 1 and "
                            "32.")
    held = [exp.EQ(this=exp.Coalesce(this=exp.Max(this=exp.If(
                this=c.copy(), true=exp.Literal.number(1), false=exp.Literal.number(0))),
                expressions=[exp.Literal.number(0)]), expression=exp.Literal.number(1))
            for c in conds]
    items = [held[0]] + [exp.And(this=held[0].copy(), expression=h) for h in held[1:]]
    return exp.Anonymous(this="array", expressions=items)


def _avg_weighted(x: exp.Expression, w: exp.Expression) -> exp.Expression:
    """SUM(x * w) / SUM(w) over the rows where both are non-NULL (Doris's AvgWeighted skips a
    row with a NULL argument), in DOUBLE."""
    both = exp.And(this=exp.Not(this=exp.Is(this=x.copy(), expression=exp.Null())),
                   expression=exp.Not(this=exp.Is(this=w.copy(), expression=exp.Null())))
    weighted = exp.If(this=both.copy(), true=exp.Mul(this=_double(x), expression=_double(w)),
                      false=exp.Null())
    weights = exp.If(this=both, true=_double(w), false=exp.Null())
    return exp.Div(this=exp.Sum(this=weighted), expression=exp.Sum(this=weights))


def _inner(arg: exp.Expression, fn: str) -> exp.Expression | None:
    if isinstance(arg, exp.Anonymous) and str(arg.this).lower() == fn and len(arg.expressions) == 1:
        return arg.expressions[0]
    return None


def agg_call(node: DorisAgg, out: str, argument) -> L.AggCall:
    name, arg = node.doris_name, node.this
    if name in ("ndv", "bitmap_union_int"):
        return L.AggCall("count_distinct", argument(arg), out)
    if name == "bitmap_union_count" and _inner(arg, "to_bitmap") is not None:
        return L.AggCall("count_distinct", argument(_inner(arg, "to_bitmap")), out)
    if name == "hll_union_agg" and _inner(arg, "hll_hash") is not None:
        return L.AggCall("count_distinct", argument(_inner(arg, "hll_hash")), out)
    func = {"hll_raw_agg": "hll_union"}.get(name, name)
    return L.AggCall(func, argument(arg), out)
