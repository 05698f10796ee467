"""sleep(n): waits n seconds per row and returns TRUE (BOOLEAN), as Doris's FunctionSleep
does row by row; NULL gives NULL without waiting, as does n <= 0 give TRUE at once.

The wait is one `Event.wait` on the session's cancel event (EvalContext.cancel, set by KILL
QUERY and by query_timeout), so a killed or timed-out query stops sleeping at once and fails
with the usual interruption error; meanwhile its CPU slot serves others (storage/cpu_slots.py). Evaluating over zero rows (type inference) never waits.
"""

from __future__ import annotations

import time

import numpy as np
import pyarrow as pa
from sqlglot import exp

from executor.expressions.casts import cast_value
from executor.expressions.context import Frame, Value
from executor.expressions.errors import ExpressionError
from executor.expressions.json_functions import call_args
from executor.expressions.vectors import to_array, to_numpy, valid_mask
from storage import cpu_slots


def eval_sleep(node: exp.Expression, frame: Frame) -> Value:
    args = call_args(node)
    if len(args) != 1:
        raise ExpressionError("sleep takes a number of seconds")
    seconds = cast_value(frame.eval(args[0]), pa.int64())
    scalar = isinstance(seconds, pa.Scalar)
    arr = to_array(seconds, frame.n)
    valid = valid_mask(arr)
    total = float(np.clip(to_numpy(arr, 0), 0, None)[valid].sum())
    _wait(total, frame)
    result = pa.array(np.ones(len(arr), bool), pa.bool_(), mask=None if valid.all() else ~valid)
    if scalar:
        return pa.scalar(None if not seconds.is_valid else True, pa.bool_())
    return result


def _wait(seconds: float, frame: Frame) -> None:
    if seconds <= 0:
        return
    cancel = frame.ctx.cancel
    with cpu_slots.blocking():  # a sleeping statement leaves its CPU slot to others
        if cancel is None:
            time.sleep(seconds)
            return
        interrupted = cancel.wait(seconds)
    if interrupted:
        from executor.errors import QueryInterrupted  # executor.errors imports this package
        raise QueryInterrupted()


HANDLERS: dict = {}
FUNCTIONS = {"SLEEP": eval_sleep}
