"""from_second / from_millisecond / from_microsecond: a Unix time (seconds, milliseconds or
microseconds since 1970-01-01 00:00:00 UTC, BIGINT) as a DATETIME in the session's time zone,
typed DATETIME(0) / DATETIME(3) / DATETIME(6) as Doris 2.1's FromSecond / FromMillisecond /
FromMicrosecond declare it (planner/datetime_scale.py gives the select item that scale).

    from_second(1700000000)               2023-11-15 06:13:20 (Asia/Shanghai)
    from_millisecond(1700000000123)       2023-11-15 06:13:20.123

A value whose local time falls outside 0000-01-01 .. 9999-12-31 gives NULL, as does NULL.
Arrow kernels only (integer arithmetic, the zone's UTC -> local conversion).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from executor.expressions import temporal
from executor.expressions.casts import cast_value
from executor.expressions.codecs import one_arg
from executor.expressions.context import Frame, Value
from executor.expressions.temporal import TIMESTAMP, US_PER_DAY
from executor.expressions.vectors import on_arrays, to_numpy, valid_mask

SCALES = {"from_second": 0, "from_millisecond": 3, "from_microsecond": 6}
# a margin of a day each side for the zone's offset; the local range is checked after
_LOW = (temporal.MIN_DAY - 1) * US_PER_DAY
_HIGH = (temporal.MAX_DAY + 2) * US_PER_DAY


def _from_epoch(name: str):
    factor = 10 ** (6 - SCALES[name])

    def handler(node: exp.Expression, frame: Frame) -> Value:
        value = one_arg(node, frame, name)
        zone = frame.ctx.zone_key

        def kernel(arr: pa.Array) -> pa.Array:
            ints = to_numpy(cast_value(arr, pa.int64()), 0).astype(np.int64)
            limit = np.iinfo(np.int64).max // factor
            ok = valid_mask(arr) & (np.abs(ints) <= limit)
            us = np.where(ok, ints, 0) * factor
            ok &= (us >= _LOW) & (us <= _HIGH)
            utc = pa.array(np.where(ok, us, 0), pa.timestamp("us", "UTC"))
            local = pc.local_timestamp(utc.cast(pa.timestamp("us", zone))).cast(pa.int64())
            local_us = to_numpy(local, 0).astype(np.int64)
            ok &= (local_us >= temporal.MIN_DAY * US_PER_DAY) & \
                (local_us < (temporal.MAX_DAY + 1) * US_PER_DAY)
            return pa.array(local_us, pa.int64(), mask=~ok).cast(TIMESTAMP)
        return on_arrays(kernel, cast_value(value, pa.int64()), n=frame.n)
    return handler


HANDLERS: dict = {}
FUNCTIONS = {name.upper(): _from_epoch(name) for name in SCALES}
