"""time_to_sec / sec_to_time: Doris's TIME values as seconds and back.

    time_to_sec(t)   INT: the seconds of a TIME ('16:32:18' -> 59538, '-01:00:00' -> -3600,
                     fractions dropped); a DATETIME gives its time of day; text that is not a
                     time ('[-]H+:MM:SS[.f]' or '[-]H+MMSS') gives NULL
    sec_to_time(n)   TIME: n seconds as '[-]HH:MM:SS', the hours not wrapped at 24
                     (sec_to_time(59538) = '16:32:18', sec_to_time(-3600) = '-01:00:00');
                     Doris 2.1's TimeValue::from_second, no range limit

This project has no TIME column type: a TIME result is its text, sent as VARCHAR. Both run on
Arrow kernels (a regular expression, numpy arithmetic).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from executor.expressions import temporal
from executor.expressions.casts import cast_value, kind
from executor.expressions.codecs import one_arg
from executor.expressions.context import Frame, Value
from executor.expressions.vectors import on_arrays, to_numpy, valid_mask

STRING = pa.string()
_TIME = r"^\s*(?P<sign>-?)(?:(?P<h>\d+):(?P<m>\d{1,2}):(?P<s>\d{1,2})|(?P<packed>\d+))(?:\.\d*)?\s*$"




def _seconds_of_text(texts: pa.Array) -> pa.Array:
    parts = pc.extract_regex(texts, _TIME)
    sign = np.where(to_numpy(pc.equal(pc.struct_field(parts, "sign"), "-"), False), -1, 1)

    def number(field: str) -> np.ndarray:
        values = pc.struct_field(parts, field)
        values = pc.if_else(pc.equal(values, ""), "0", values)
        return to_numpy(cast_value(values, pa.int64()), 0)
    packed_text = pc.struct_field(parts, "packed")
    is_packed = to_numpy(pc.not_equal(packed_text, ""), False).astype(bool)
    packed = number("packed")
    hours = np.where(is_packed, packed // 10000, number("h"))
    minutes = np.where(is_packed, packed // 100 % 100, number("m"))
    seconds = np.where(is_packed, packed % 100, number("s"))
    valid = valid_mask(parts) & (minutes < 60) & (seconds < 60)
    total = sign * (hours * 3600 + minutes * 60 + seconds)
    valid &= np.abs(total) <= 2 ** 31 - 1
    return pa.array(np.where(valid, total, 0).astype(np.int32), pa.int32(), mask=~valid)


def eval_time_to_sec(node: exp.Expression, frame: Frame) -> Value:
    v = one_arg(node, frame, "time_to_sec")
    if pa.types.is_null(v.type):
        return pa.scalar(None, pa.int32())
    if kind(v.type) in ("datetime", "date"):
        def of_day(arr: pa.Array) -> pa.Array:
            parts = temporal.split(arr)
            secs = (parts.micros // 1_000_000).astype(np.int32)
            return pa.array(secs, pa.int32(), mask=~parts.valid)
        return on_arrays(of_day, v, n=frame.n)
    return on_arrays(_seconds_of_text, cast_value(v, STRING), n=frame.n)


def format_seconds(seconds: np.ndarray, valid: np.ndarray) -> pa.Array:
    """'[-]HH:MM:SS' of each number of seconds (hours at least two digits)."""
    magnitude = np.abs(seconds)
    hours, rest = np.divmod(magnitude, 3600)
    minutes, secs = np.divmod(rest, 60)

    def padded(values: np.ndarray) -> pa.Array:
        return pc.utf8_lpad(pa.array(values).cast(STRING), 2, "0")
    sign = pa.array(np.where(seconds < 0, "-", ""))
    text = pc.binary_join_element_wise(sign, padded(hours), ":", padded(minutes), ":",
                                       padded(secs), "")
    return pc.if_else(pa.array(valid), text, pa.scalar(None, STRING))


def eval_sec_to_time(node: exp.Expression, frame: Frame) -> Value:
    v = cast_value(one_arg(node, frame, "sec_to_time"), pa.int64())

    def kernel(arr: pa.Array) -> pa.Array:
        return format_seconds(to_numpy(arr, 0), valid_mask(arr))
    return on_arrays(kernel, v, n=frame.n)


HANDLERS: dict = {}
FUNCTIONS = {"TIME_TO_SEC": eval_time_to_sec, "SEC_TO_TIME": eval_sec_to_time}
