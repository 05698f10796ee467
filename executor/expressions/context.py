"""The evaluation context (session facts) and the frame a handler evaluates against.

`EvalContext` carries what a statement needs from its session: the statement's fixed `now` (so
NOW() is stable within a statement) and the session time zone used by UNIX_TIMESTAMP and
FROM_UNIXTIME. `Frame` binds one batch to one context and gives handlers `eval(child)`, the row
count and column lookup.

Intermediate values are `Value = pa.Array | pa.Scalar`: a constant sub-expression stays a scalar
(computed once) until `evaluate` broadcasts the final result to the batch's row count.
"""

from __future__ import annotations

import functools

import threading
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from typing import Callable, Union

import pyarrow as pa
from sqlglot import exp

from executor.expressions.decimal_int64 import Unscaled
from executor.expressions.errors import ExpressionError, UnknownColumnError
from executor.expressions.time_zones import UnknownTimeZone, arrow_zone, tz_of

Value = Union[pa.Array, pa.Scalar]


@dataclass
class EvalContext:
    """Session facts an expression may read. `now` is naive local time in `time_zone`."""

    now: datetime | None = None
    time_zone: str = "Asia/Shanghai"
    div_precision_increment: int = 4
    cancel: threading.Event | None = None  # the session's KILL / query_timeout event (sleep())
    block_encryption_mode: str = ""  # aes_/sm4_encrypt's mode when the call names none
    zone: tzinfo = field(init=False, repr=False)
    zone_key: str = field(init=False, repr=False)  # IANA name or `+hh:mm`, as Arrow reads it

    def __post_init__(self) -> None:
        try:
            self.zone_key = arrow_zone(self.time_zone)
        except UnknownTimeZone as e:
            raise ExpressionError(str(e)) from e
        self.zone = tz_of(self.zone_key)
        if self.now is None:
            self.now = datetime.now(self.zone).replace(tzinfo=None)
        elif self.now.tzinfo is not None:
            self.now = self.now.astimezone(self.zone).replace(tzinfo=None)


class Frame:
    """One batch + one context; handlers call `frame.eval(child)` to recurse.

    `shared`: sub-expressions that occur more than once in what this frame evaluates (common
    subexpressions, see `evaluate.shared_subexpressions`); each is evaluated once and its value
    kept for the frame's life.

    `eval` returns Arrow values; `eval_raw` may also return a `decimal_int64.Unscaled` (a
    DECIMAL still in int64), for handlers that compute on those (+ - *, the aggregates)."""

    def __init__(self, batch: pa.Table, ctx: EvalContext,
                 evaluator: Callable[[exp.Expression, Frame], Value],
                 shared: set[exp.Expression] | None = None):
        self.batch = batch
        self.ctx = ctx
        self.n = batch.num_rows
        self._evaluator = evaluator
        self._names: dict[str, int] | None = None
        self._combined: dict[int, pa.Array] = {}
        self._lazy: dict[int, Unscaled] = {}
        self._shared = shared
        self._memo: dict[exp.Expression, object] = {}

    def eval(self, node: exp.Expression) -> Value:
        value = self.eval_raw(node)
        return value.to_arrow() if isinstance(value, Unscaled) else value

    def eval_raw(self, node: exp.Expression):
        if not self._shared or node not in self._shared:
            return self._evaluator(node, self)
        value = self._memo.get(node)
        if value is None:
            value = self._memo[node] = self._evaluator(node, self)
        return value

    def has_column(self, name: str) -> bool:
        return self.index(name) is not None

    def column(self, name: str) -> pa.Array:
        index = self.index(name)
        if index is None:
            raise UnknownColumnError(name)
        return _combined(self._combined, index, self.batch.column(index))

    def lazy_decimal(self, name: str) -> Unscaled | None:
        """A DECIMAL column of at most 18 digits as a lazy `Unscaled` (for + - * and the
        aggregates; `eval` turns it back into `column(name)`); None for other columns."""
        index = self.index(name)
        if index is None:
            raise UnknownColumnError(name)
        t = self.batch.schema.field(index).type
        if not (pa.types.is_decimal128(t) and t.precision <= 18):
            return None
        lazy = self._lazy.get(index)
        if lazy is None:
            col = self.batch.column(index)
            chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
            # the column combined on demand, in this frame's cache, by a callable that does not
            # hold the frame: a frame -> Unscaled -> frame cycle kept every DECIMAL column a query
            # read alive until the cyclic collector ran (rarely: server/gc_tuning.py), ~300 MB
            # per TPC-H Q1 at SF 1
            lazy = self._lazy[index] = Unscaled.of_column(
                chunks, t, functools.partial(_combined, self._combined, index, col))
        return lazy

    def index(self, name: str) -> int | None:
        if self._names is None:
            names = self.batch.column_names
            self._names = {n: i for i, n in enumerate(names)}
            lowered: dict[str, list[int]] = {}
            for i, n in enumerate(names):
                lowered.setdefault(n.lower(), []).append(i)
            # Case-insensitive fallback only where it is unambiguous (Doris names are
            # case-insensitive; the planner normally passes the exact spelling).
            self._folded = {k: v[0] for k, v in lowered.items() if len(v) == 1}
        if name in self._names:
            return self._names[name]
        return self._folded.get(name.lower())


def _combined(cache: dict[int, pa.Array], index: int, col) -> pa.Array:
    """Column `index` as one array, combined once per frame (a column used twice)."""
    found = cache.get(index)
    if found is None:
        found = cache[index] = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    return found
