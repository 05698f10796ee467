"""Window (analytic) functions: `f(...) OVER (PARTITION BY ... ORDER BY ... ROWS|RANGE ...)`.

Windows are computed after GROUP BY / HAVING and before ORDER BY / DISTINCT, as in SQL. Their
arguments, partition keys and order keys are first computed as columns (`__wN`), one Window
node computes every window function, and the select list / ORDER BY are rewritten to read the
results. Frames are normalised to (kind, start, end) with offsets: None = UNBOUNDED, 0 =
CURRENT ROW, negative = PRECEDING, positive = FOLLOWING.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from catalog.errors import AnalysisError, NotSupported
from planner import logical as L
from planner.naming import NameGen

_RANKING = {exp.RowNumber: "row_number", exp.Rank: "rank", exp.DenseRank: "dense_rank",
            exp.Ntile: "ntile", exp.CumeDist: "cume_dist", exp.PercentRank: "percent_rank"}
_VALUE = {exp.Lag: "lag", exp.Lead: "lead", exp.FirstValue: "first_value",
          exp.LastValue: "last_value"}
_AGG = {exp.Sum: "sum", exp.Avg: "mean", exp.Min: "min", exp.Max: "max", exp.Count: "count"}
WINDOW_FUNCTIONS = frozenset({*_RANKING, *_VALUE})  # the window-only functions bound here


@dataclass
class WindowCall:
    func: str
    arg: str | None              # input column (internal name)
    partition_by: list[str]
    order_by: list[L.SortKey]
    frame: tuple[str, int | None, int | None]  # (rows|range, start, end)
    output: str
    offset: int = 1              # lag/lead offset, ntile buckets
    default: object = None       # lag/lead default (a constant expression's column)
    ignore_nulls: bool = False   # first_value / last_value(x, true)


def has_windows(exprs: list[exp.Expression]) -> bool:
    return any(e.find(exp.Window) is not None for e in exprs)


_RANGE_BOUNDS = ("WindowFrame with RANGE must use both UNBOUNDED boundary or one UNBOUNDED "
                 "boundary and one CURRENT ROW")  # Doris 2.1's Nereids check, word for word


def _bound(value, side: str | None, kind: str = "rows") -> int | None:
    if isinstance(value, str):
        if value.upper() == "UNBOUNDED":
            return None
        if value.upper() == "CURRENT ROW":
            return 0
    if isinstance(value, exp.Literal) and not value.is_string:
        n = int(value.this)
        return -n if (side or "").lower() == "preceding" else n
    if kind == "range":  # RANGE INTERVAL 1 DAY PRECEDING
        raise AnalysisError(_RANGE_BOUNDS)
    raise NotSupported(f"Window frame bound {value} is not supported yet")


def _frame(node: exp.Window, has_order: bool) -> tuple[str, int | None, int | None]:
    spec = node.args.get("spec")
    if spec is None:
        # SQL default: with ORDER BY, RANGE UNBOUNDED PRECEDING .. CURRENT ROW; else the partition.
        return ("range", None, 0) if has_order else ("rows", None, None)
    kind = (spec.args.get("kind") or "rows").lower()
    start = _bound(spec.args.get("start"), spec.args.get("start_side"), kind)
    end_raw = spec.args.get("end")
    end = _bound(end_raw, spec.args.get("end_side"), kind) if end_raw is not None else 0
    if kind == "range" and (start not in (None, 0) or end not in (None, 0)
                            or start == end == 0):
        raise AnalysisError(_RANGE_BOUNDS)
    return kind, start, end


def plan_windows(plan: object, exprs: list[exp.Expression], names: NameGen
                 ) -> tuple[object, list[exp.Expression]]:
    """A Window node over `plan` and `exprs` rewritten to read the window results."""
    pre_exprs: list[exp.Expression] = []
    pre_names: list[str] = []
    calls: list[WindowCall] = []

    def column_of(e: exp.Expression) -> str:
        if isinstance(e, exp.Column):
            return e.name
        for existing, name in zip(pre_exprs, pre_names):
            if existing == e:
                return name
        name = names.new("__w")
        pre_exprs.append(e)
        pre_names.append(name)
        return name

    def window_call(node: exp.Window) -> exp.Expression:
        if node.args.get("alias") is not None:
            raise NotSupported("Named windows (WINDOW w AS ...) are not supported yet")
        func = node.this
        partition = [column_of(p) for p in node.args.get("partition_by") or []]
        order = node.args.get("order")
        order_keys = [L.SortKey.of(column_of(o.this), o)
                      for o in (order.expressions if order is not None else [])]
        frame = _frame(node, bool(order_keys))
        out = names.new("__win")
        call = WindowCall("", None, partition, order_keys, frame, out)
        kind = type(func)
        if kind in _RANKING:
            call.func = _RANKING[kind]
            if kind is exp.Ntile:
                call.offset = _positive_int(func.this, "NTILE")
            elif order_keys == [] and call.func in ("rank", "dense_rank"):
                pass  # every row is a peer: rank 1
        elif kind in _VALUE:
            call.func = _VALUE[kind]
            call.arg = column_of(func.this)
            call.ignore_nulls = bool(func.meta.get("ignore_nulls"))  # server/parser/dialect.py
            if kind in (exp.Lag, exp.Lead):
                offset = func.args.get("offset")
                call.offset = _positive_int(offset, call.func.upper()) if offset is not None else 1
                default = func.args.get("default")
                call.default = column_of(default) if default is not None else None
        elif kind in _AGG:
            arg = func.this
            if isinstance(arg, exp.Distinct):
                raise NotSupported("DISTINCT in window aggregates is not supported yet")
            if kind is exp.Count and (arg is None or isinstance(arg, exp.Star)):
                call.func = "count_all"
            else:
                call.func = _AGG[kind]
                call.arg = column_of(arg)
        else:
            raise NotSupported(f"Window function {func.sql(dialect='doris')} is not supported yet")
        calls.append(call)
        return exp.column(out, quoted=True)

    def rewrite(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Window):
            return window_call(node)
        for key, value in list(node.args.items()):
            if isinstance(value, exp.Expression):
                node.set(key, rewrite(value))
            elif isinstance(value, list):
                node.set(key, [rewrite(v) if isinstance(v, exp.Expression) else v for v in value])
        return node

    rewritten = [rewrite(e.copy()) for e in exprs]
    if not calls:
        return plan, exprs
    if pre_exprs:
        plan = L.Extend(plan, pre_exprs, pre_names)
    return L.Window(plan, calls), rewritten


def _positive_int(e: exp.Expression | None, what: str) -> int:
    if not (isinstance(e, exp.Literal) and not e.is_string and e.this.isdigit() and int(e.this) > 0):
        raise AnalysisError(f"The parameter of {what} must be a positive integer constant")
    return int(e.this)
