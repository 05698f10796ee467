"""months_between(enddate, startdate[, round]) as Doris (and Spark) compute it: the whole
months between the two dates when they fall on the same day of the month or both on the last
day of their months (the time of day ignored); otherwise the month difference plus the rest
(days and time of day) over 31 days; rounded to 8 decimals unless `round` is false. DOUBLE;
NULL if either date is. Vectorised over the split day/time columns.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from sqlglot import exp

from executor.expressions import temporal
from executor.expressions.casts import cast_value
from executor.expressions.context import Frame, Value
from executor.expressions.datetime_functions import to_temporal
from executor.expressions.errors import ExpressionError
from executor.expressions.temporal import TIMESTAMP, US_PER_DAY
from executor.expressions.vectors import on_arrays


def _months_between(later: pa.Array, earlier: pa.Array, round_off: bool) -> pa.Array:
    a, b = temporal.split(later), temporal.split(earlier)
    months = (a.year * 12 + a.month) - (b.year * 12 + b.month)
    last_a = a.day == temporal.days_in_month(a.year, a.month)
    last_b = b.day == temporal.days_in_month(b.year, b.month)
    whole = (a.day == b.day) | (last_a & last_b)
    rest = ((a.day - b.day) * US_PER_DAY + (a.micros - b.micros)) / (31 * US_PER_DAY)
    result = np.where(whole, months, months + rest).astype(np.float64)
    if round_off:
        result = np.round(result, 8)
    return pa.array(result, mask=~(a.valid & b.valid))


def eval_months_between(node: exp.Expression, frame: Frame) -> Value:
    args = [node.this, node.expression] if not isinstance(node, exp.Anonymous) else \
        list(node.expressions)
    if len(args) == 2 and not isinstance(node, exp.Anonymous) and node.args.get("roundoff"):
        args.append(node.args["roundoff"])
    if len(args) not in (2, 3):
        raise ExpressionError("months_between takes two dates and an optional round flag")
    round_off = True
    if len(args) == 3:
        flag = frame.eval(args[2])
        if not isinstance(flag, pa.Scalar):
            raise ExpressionError("months_between's round flag must be a constant")
        round_off = bool(flag.as_py())
    later, earlier = (cast_value(to_temporal(frame.eval(e)), TIMESTAMP) for e in args[:2])
    return on_arrays(lambda x, y: _months_between(x, y, round_off), later, earlier, n=frame.n)


HANDLERS = {exp.MonthsBetween: eval_months_between}
FUNCTIONS = {"MONTHS_BETWEEN": eval_months_between}
