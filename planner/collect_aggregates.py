"""Doris's aggregates that collect a group's values: the ARRAY builders and topn / histogram.

    collect_list(x[, max_size]), group_array(x[, max_size])   ARRAY of the non-NULL values, in
                                                               input order, at most max_size
    array_agg(x)                                               ARRAY of the values, NULLs kept
    collect_set(x[, max_size]), group_uniq_array(x[, max_size])  ARRAY of the distinct non-NULL
                                                               values
    topn(x, n[, space_expand_rate])                            JSON text `{"v":count,...}` of the
                                                               n most frequent values
    histogram(x[, max_buckets]), hist(...)                     JSON text of an equal-height
                                                               histogram (default 128 buckets)

`rewrite` turns the calls (sqlglot leaves most of them as `exp.Anonymous`; array_agg is
`exp.ArrayAgg`, collect_set `exp.ArrayUniqueAgg`) into `DorisCollect` nodes, so aggregation
planning treats them as aggregates; `collect_call` gives their `AggCall` (func = the canonical
name, param = the constant second argument). The executor finishes them from Acero's `list` /
`distinct` hash kernels (executor/operators/aggregate_collect.py).
"""

from __future__ import annotations

from sqlglot import exp

from catalog.errors import AnalysisError
from planner import logical as L

CANONICAL = {"collect_list": "collect_list", "group_array": "collect_list",
             "array_agg": "array_agg", "collect_set": "collect_set",
             "group_uniq_array": "collect_set", "topn": "topn", "histogram": "histogram",
             "hist": "histogram"}
_ARITY = {"collect_list": (1, 2), "array_agg": (1, 1), "collect_set": (1, 2), "topn": (2, 3),
          "histogram": (1, 2)}


class DorisCollect(exp.Expression, exp.AggFunc):
    """A collecting aggregate: `this` the argument, `name_` as written, `param` the constant
    second argument (max size, n, buckets) or None."""

    arg_types = {"this": True, "name_": True, "param": False, "extra": False}

    @property
    def func(self) -> str:
        return CANONICAL[self.args["name_"].lower()]

    def sql(self, dialect=None, **opts) -> str:  # how EXPLAIN and column names show it
        args = [self.this] + [a for a in (self.args.get("param"), self.args.get("extra")) if a]
        return f"{self.args['name_'].lower()}({', '.join(a.sql(dialect=dialect, **opts) for a in args)})"


def rewrite(node: exp.Expression) -> exp.Expression:
    """`node` as a DorisCollect when it is one of the calls above, else `node`."""
    if isinstance(node, exp.ArrayAgg):
        return DorisCollect(this=node.this, name_="array_agg")
    if isinstance(node, exp.ArrayUniqueAgg):
        return DorisCollect(this=node.this, name_="collect_set")
    if not isinstance(node, exp.Anonymous):
        return node
    name = str(node.this).lower()
    if name not in CANONICAL:
        return node
    args = list(node.expressions)
    lo, hi = _ARITY[CANONICAL[name]]
    if not lo <= len(args) <= hi:
        raise AnalysisError(f"Can not found function '{name}' which has {len(args)} arity. "
                            f"Candidate functions are: [{name}]")
    return DorisCollect(this=args[0], name_=name, param=args[1] if len(args) > 1 else None,
                        extra=args[2] if len(args) > 2 else None)


def collect_call(node: DorisCollect, out: str, argument) -> L.AggCall:
    param = node.args.get("param")
    value = None
    if param is not None:
        if not (isinstance(param, exp.Literal) and not param.is_string):
            raise AnalysisError(f"{node.args['name_']}: the second argument must be a constant "
                                "integer")
        value = float(int(param.this))
        if value <= 0 and node.func != "histogram":
            raise AnalysisError(f"{node.args['name_']}: the second argument must be positive")
    return L.AggCall(node.func, argument(node.this), out, param=value)
