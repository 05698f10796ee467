"""window_funnel(window, mode, ts, c1, ..., cn), Doris's funnel aggregate, planned as two
collected columns: the timestamp (DATETIME; NULL for a row with any NULL argument, which the
aggregate skips as Doris's nullable variadic aggregates do) and the row's conditions as bits
(bit k-1 set when ck holds). The executor finishes them (executor/operators/window_funnel.py).

Checked here, with Doris's FE texts: at least four arguments, a constant integer window, a
constant string mode among default / deduplication / fixed / increase, at most 62 conditions.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.dialects.doris import Doris
from sqlglot.generator import Generator

from catalog.errors import AnalysisError
from planner import logical as L

MODES = ("default", "deduplication", "fixed", "increase")
MAX_CONDITIONS = 62


class EventAggregate(exp.Expression, exp.AggFunc):
    """An aggregate over (timestamp, condition bits) events: `this` the guarded timestamp,
    `expression` the bits, `text` the call as written. Generated SQL (views, regenerated
    subqueries, names, EXPLAIN) shows `text`, so that a parse of it lifts the same node."""

    def sql(self, dialect=None, **opts) -> str:
        return self.args["text"]

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for generator in (Generator, Doris.Generator):
            generator.TRANSFORMS = {**generator.TRANSFORMS, cls: lambda self, e: e.args["text"]}


class WindowFunnel(EventAggregate):
    """`window`, `mode`, `levels`: the constants."""

    arg_types = {"this": True, "expression": True, "window": True, "mode": True,
                 "levels": True, "text": True}


def lift_window_funnel(node: exp.Anonymous) -> exp.Expression:
    args = node.expressions
    text = f"window_funnel({', '.join(a.sql(dialect='doris') for a in args)})"
    if len(args) < 4:
        raise AnalysisError("The window_funnel function must have at least four params")
    window, mode, ts, conds = args[0], args[1], args[2], args[3:]
    seconds = _constant(window)
    if type(seconds) is not int:
        raise AnalysisError("The window params of window_funnel function must be integer")
    if not (isinstance(mode, exp.Literal) and mode.is_string):
        raise AnalysisError("The mode params of window_funnel function must be string")
    mode_name = mode.this.lower()
    if mode_name not in MODES:
        raise AnalysisError(f"Invalid window_funnel mode: {mode.this}")
    if len(conds) > MAX_CONDITIONS:
        raise AnalysisError(f"The window_funnel function supports at most {MAX_CONDITIONS} "
                            f"event conditions, but got {len(conds)}")
    stamp, bits = event_inputs(ts, conds)
    return WindowFunnel(this=stamp, expression=bits, window=str(seconds), mode=mode_name,
                        levels=str(len(conds)), text=text)


def event_inputs(ts: exp.Expression, conds: list[exp.Expression]
                 ) -> tuple[exp.Expression, exp.Expression]:
    """(the timestamp as DATETIME, NULL when any argument is NULL; the conditions as bits:
    bit k set when condition k + 1 holds), the two columns an event aggregate collects."""
    any_null = exp.Is(this=ts.copy(), expression=exp.Null())
    for c in conds:
        any_null = exp.Or(this=any_null, expression=exp.Is(this=c.copy(), expression=exp.Null()))
    stamp = exp.If(this=any_null, true=exp.Null(),
                   false=exp.Cast(this=ts.copy(), to=exp.DataType.build("DATETIME")))
    bits: exp.Expression = exp.Literal.number(0)
    for k, c in enumerate(conds):
        bits = exp.Add(this=bits, expression=exp.If(this=c.copy(),
                                                     true=exp.Literal.number(1 << k),
                                                     false=exp.Literal.number(0)))
    return stamp, exp.Cast(this=bits, to=exp.DataType.build("BIGINT"))


def _constant(e: exp.Expression):
    """The value of a constant expression (`3600 * 3`), or None."""
    from executor.expressions.evaluate import _foldable, literal_value

    if isinstance(e, exp.Literal) and e.is_string or not _foldable(e):
        return None
    try:
        return literal_value(e)
    except Exception:  # noqa: BLE001 - not a constant this can evaluate
        return None


def window_funnel_call(node: WindowFunnel, out: str, argument) -> L.AggCall:
    return L.AggCall("window_funnel", None, out,
                     args=[argument(node.this), argument(node.expression)],
                     param=(int(node.args["window"]), node.args["mode"],
                            int(node.args["levels"]), node.args["text"]))
