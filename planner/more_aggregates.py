"""Doris 2.1's statistical and counting aggregates over whole groups of values, lifted from
sqlglot's calls into `DorisGroupAgg` nodes and planned as `AggCall`s whose arguments the
executor collects per group (executor/operators/aggregate_more.py finishes them):

    kurt(x), kurt_pop(x), kurtosis(x)    population excess kurtosis m4 / m2^2 - 3, DOUBLE
    skew(x), skew_pop(x), skewness(x)    population skewness m3 / m2^1.5, DOUBLE
                                         (NULL for no values or m2 = 0; DISTINCT allowed)
    percentile_array(x, [p1, ...])       ARRAY<DOUBLE>: each level's percentile (as
                                         percentile's interpolation)
    count_by_enum(e1, ..., en)           JSON array text, per argument
                                         {"cbe":{value:count,...},"notnull":n,"null":m,"all":a}
    topn_array(x, n[, space])            ARRAY of the n most frequent values
    topn_weighted(x, w, n[, space])      ARRAY of the n values of the largest summed weights

Constant arguments (levels, n) are checked here with Doris's messages.
"""

from __future__ import annotations

from sqlglot import exp

from catalog.errors import AnalysisError
from planner import logical as L

MOMENTS = {"kurt": "kurt", "kurt_pop": "kurt", "kurtosis": "kurt", "skew": "skew",
           "skew_pop": "skew", "skewness": "skew"}
# name -> (column arguments (None: any number, at least one), constant arguments lo, hi)
SHAPES = {"percentile_array": (1, 1, 1), "count_by_enum": (None, 0, 0),
          "topn_array": (1, 1, 2), "topn_weighted": (2, 1, 2),
          **{name: (1, 0, 0) for name in MOMENTS}}
NAMES = tuple(SHAPES)


class DorisGroupAgg(exp.Expression, exp.AggFunc):
    """One of the aggregates above: `this` the first argument, `expressions` the other column
    arguments, `params` the constant ones, `name_` as written, `distinct` for X(DISTINCT x)."""

    arg_types = {"this": True, "expressions": False, "params": False, "name_": True,
                 "distinct": False}

    @property
    def func(self) -> str:
        name = self.args["name_"].lower()
        return MOMENTS.get(name, name)

    def sql(self, dialect=None, **opts) -> str:  # how EXPLAIN and column names show it
        args = [self.this] + list(self.expressions) + list(self.args.get("params") or [])
        text = ", ".join(a.sql(dialect=dialect, **opts) for a in args)
        distinct = "DISTINCT " if self.args.get("distinct") else ""
        return f"{self.args['name_'].lower()}({distinct}{text})"


def rewrite(node: exp.Expression) -> exp.Expression:
    """`node` as a DorisGroupAgg when it is one of the calls above, else `node`."""
    if isinstance(node, (exp.Kurtosis, exp.Skewness)):
        name = "kurtosis" if isinstance(node, exp.Kurtosis) else "skewness"
        args = [node.this]
    elif isinstance(node, exp.Anonymous) and str(node.this).lower() in SHAPES:
        name, args = str(node.this).lower(), list(node.expressions)
    else:
        return node
    columns, lo, hi = SHAPES[name]
    distinct = False
    if args and isinstance(args[0], exp.Distinct) and name in MOMENTS:
        distinct, args = True, list(args[0].expressions)
    count = len(args) if columns is None else columns
    if len(args) < max(count, 1) or not lo <= len(args) - count <= hi:
        raise AnalysisError(f"Can not found function '{name}' which has {len(args)} arity. "
                            f"Candidate functions are: [{name}]")
    return DorisGroupAgg(this=args[0], expressions=args[1:count], params=args[count:],
                         name_=name, distinct=distinct)


def group_agg_call(node: DorisGroupAgg, out: str, argument) -> L.AggCall:
    columns = [argument(node.this)] + [argument(e) for e in node.expressions]
    params = list(node.args.get("params") or [])
    func = node.func
    if func == "percentile_array":
        param = _levels(params[0])
    elif func in ("topn_array", "topn_weighted"):
        param = _positive(params[0], node.args["name_"])
    else:
        param = None
    return L.AggCall(func, None, out, args=columns, distinct=bool(node.args.get("distinct")),
                     param=(param, node.sql(dialect="doris")))


def _number(e: exp.Expression) -> float | None:
    """The value of a number literal (`0.5`, `-1`, `CAST('0.5' AS DOUBLE)`), else None."""
    if isinstance(e, exp.Neg):
        inner = _number(e.this)
        return None if inner is None else -inner
    if isinstance(e, exp.Cast):
        e = e.this
    if isinstance(e, exp.Literal):
        try:
            return float(e.this)
        except ValueError:
            return None
    return None


def _levels(e: exp.Expression) -> tuple[float, ...]:
    items = e.expressions if isinstance(e, exp.Array) or (
        isinstance(e, exp.Anonymous) and str(e.this).lower() == "array") else None
    if items is None:
        raise AnalysisError("percentile_array: the quantiles must be a constant array")
    levels = []
    for item in items:
        if isinstance(item, exp.Null):
            raise AnalysisError("percentile_array quantile should not be null")
        value = _number(item)
        if value is None:
            raise AnalysisError("percentile_array: the quantiles must be constants")
        if not 0 <= value <= 1:
            raise AnalysisError("percentile_array quantile must be in [0, 1]")
        levels.append(value)
    return tuple(levels)


def _positive(e: exp.Expression, name: str) -> int:
    value = _number(e)
    if value is None or value != int(value):
        raise AnalysisError(f"{name}: the number of values must be a constant integer")
    if value <= 0:
        raise AnalysisError(f"{name}: the number of values must be positive")
    return int(value)
