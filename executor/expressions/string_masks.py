"""Doris's masking and suffix string functions, vectorised over the strings' bytes:

    mask(s[, upper[, lower[, number]]])   ASCII A-Z -> upper ('X'), a-z -> lower ('x'),
                                          0-9 -> number ('n'); each replacement is the first
                                          character of a constant argument (empty: the default)
    mask_first_n(s[, n])                  the first n bytes masked with the defaults (all
                                          without n); a negative n is an error, as in Doris
    mask_last_n(s[, n])                   the last n bytes
    append_trailing_char_if_absent(s, c)  s, then c unless s already ends with it ('' gets c);
                                          NULL unless c is exactly one character

Masking works on bytes as Doris's FunctionMask does: only ASCII bytes change, so multi-byte
UTF-8 characters are never altered or split. The byte table is applied with numpy over the
array's value buffer (no Python per string).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from executor.expressions.context import Frame, Value
from executor.expressions.errors import ExpressionError
from executor.expressions.strings import STRING, text
from executor.expressions.vectors import to_array, to_numpy

_DEFAULTS = (ord("X"), ord("x"), ord("n"))


def _table(upper: int, lower: int, number: int) -> np.ndarray:
    table = np.arange(256, dtype=np.uint8)
    table[ord("A"):ord("Z") + 1] = upper
    table[ord("a"):ord("z") + 1] = lower
    table[ord("0"):ord("9") + 1] = number
    return table


def _masked(v: Value, n: int, table: np.ndarray, first: int | np.ndarray | None,
            last: int | np.ndarray | None) -> pa.Array:
    """The strings of `v` with `table` applied to every byte, or to the first / last bytes."""
    arr = to_array(text(v), n)
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    arr = arr.cast(pa.large_string())
    validity, offsets_buf, data_buf = arr.buffers()
    offsets = np.frombuffer(offsets_buf, np.int64, len(arr) + 1, arr.offset * 8)
    base, end = int(offsets[0]), int(offsets[-1])
    data = np.frombuffer(data_buf, np.uint8, end - base, base).copy() if data_buf else \
        np.zeros(0, np.uint8)
    if first is None and last is None:
        data = table[data]
    else:
        lengths = np.diff(offsets)
        row = np.repeat(np.arange(len(arr)), lengths)
        pos = np.arange(len(data), dtype=np.int64) - (offsets[:-1] - base)[row]
        if first is not None:
            chosen = pos < np.broadcast_to(first, len(arr))[row]
        else:
            chosen = pos >= (lengths - np.broadcast_to(last, len(arr)))[row]
        data[chosen] = table[data[chosen]]
    out = pa.LargeStringArray.from_buffers(
        len(arr), pa.py_buffer(offsets - base), pa.py_buffer(data.tobytes()),
        validity, arr.null_count)
    return out.cast(STRING)


def _char(v: Value, default: int) -> int:
    if not isinstance(v, pa.Scalar):
        raise ExpressionError("mask: the replacement characters must be constants")
    s = v.as_py() if v.is_valid else None
    raw = str(s).encode() if s is not None else b""
    return raw[0] if raw else default


def fn_mask(node: exp.Anonymous, frame: Frame) -> Value:
    if not 1 <= len(node.expressions) <= 4:
        raise ExpressionError("too many arguments for function mask")
    args = [frame.eval(e) for e in node.expressions]
    chars = [_char(a, d) for a, d in zip(args[1:], _DEFAULTS)] + list(_DEFAULTS[len(args) - 1:])
    return _masked(args[0], frame.n, _table(*chars), None, None)


def _partial(name: str, from_end: bool):
    def handler(node: exp.Anonymous, frame: Frame) -> Value:
        if len(node.expressions) not in (1, 2):
            raise ExpressionError(f"Function {name.upper()} takes 1 or 2 arguments")
        s = frame.eval(node.expressions[0])
        table = _table(*_DEFAULTS)
        if len(node.expressions) == 1:
            return _masked(s, frame.n, table, None, None)
        count = frame.eval(node.expressions[1])
        counts = to_numpy(to_array(count, frame.n), 0).astype(np.int64)
        if len(counts) and counts.min() < 0:
            raise ExpressionError(f"function {name} only accept non-negative input for 2nd "
                                  f"argument but got {int(counts.min())}")
        result = _masked(s, frame.n, table, None if from_end else counts,
                         counts if from_end else None)
        null_count = pc.is_null(to_array(count, frame.n))
        return pc.if_else(null_count, pa.scalar(None, STRING), result)
    return handler


def fn_append_trailing_char_if_absent(node: exp.Anonymous, frame: Frame) -> Value:
    if len(node.expressions) != 2:
        raise ExpressionError("Function APPEND_TRAILING_CHAR_IF_ABSENT takes 2 arguments")
    s, c = (text(frame.eval(e)) for e in node.expressions)
    last = pc.utf8_slice_codeunits(s, -1)
    kept = pc.if_else(pc.equal(last, c), s, pc.binary_join_element_wise(s, c, ""))
    return pc.if_else(pc.equal(pc.utf8_length(c), 1), kept, pa.scalar(None, STRING))


HANDLERS: dict = {}
FUNCTIONS = {
    "MASK": fn_mask,
    "MASK_FIRST_N": _partial("mask_first_n", from_end=False),
    "MASK_LAST_N": _partial("mask_last_n", from_end=True),
    "APPEND_TRAILING_CHAR_IF_ABSENT": fn_append_trailing_char_if_absent,
}
