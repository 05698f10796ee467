"""Doris's format(fmt, v1[, v2...]) (function_format.cpp): the {fmt} library's format string
applied to the values, e.g. format('{:.2f}', 3.14159) = '3.14', format('{}-{}', 'a', 'b') =
'a-b', format('{0}{0}', 'x') = 'xx'.

Python's str.format reads the same replacement-field language ({}, {0}, {:>8}, {:.3f},
{:x}, {:e}); one difference is bridged here: {fmt} writes a float's shortest form without a
trailing '.0' (format('{}', 2.0) = '2'), Python's repr keeps it. The values share one type, as
Doris's signatures make them: integers stay integers, floats and decimals become DOUBLE, anything
else a string. NULL in any argument gives NULL; a bad format string is an error, with Doris's
message.

sqlglot reads FORMAT as MySQL's FORMAT(x, d) (exp.NumberToStr, at most three arguments);
server/parser/dialect.py makes it a plain call so that any number of values parse; both forms
come here. There is no vectorised formatter: the format runs once per distinct combination of
argument values (`vectors.map_distinct_rows`), not once per row.
"""

from __future__ import annotations

from typing import Any, Callable

import pyarrow as pa
from sqlglot import exp

from executor.expressions.casts import cast_value, kind
from executor.expressions.context import Frame, Value
from executor.expressions.errors import ExpressionError
from executor.expressions.json_functions import call_args
from executor.expressions.vectors import all_scalar, map_distinct_rows, to_array

STRING = pa.string()


class _Float(float):
    """A float whose default ({}) form is {fmt}'s: the shortest round trip, no '.0'."""

    def __format__(self, spec: str) -> str:
        if spec:
            return format(float(self), spec)
        text = repr(float(self))
        return text[:-2] if text.endswith(".0") else text


def _value_type(values: list[Value]) -> tuple[pa.DataType, Callable[[Any], Any]]:
    kinds = {kind(v.type) for v in values} - {"null"}
    if kinds <= {"int", "bool"} and kinds:
        return pa.int64(), int
    if kinds <= {"int", "bool", "float", "decimal"} and kinds:
        return pa.float64(), _Float
    return STRING, str


def eval_format(node: exp.Expression, frame: Frame) -> Value:
    args = [a for a in call_args(node)]
    if len(args) < 2:
        raise ExpressionError("format takes a format string and one or more values")
    pattern = cast_value(frame.eval(args[0]), STRING)
    values = [frame.eval(a) for a in args[1:]]
    target, convert = _value_type(values)
    values = [cast_value(v, target) for v in values]

    def apply(fmt: str, *items: Any) -> str:
        try:
            return fmt.format(*(convert(x) for x in items))
        except (ValueError, IndexError, KeyError, TypeError) as e:
            raise ExpressionError(
                f'Invalid Input argument "{fmt}" of function format, error: {e}') from e

    scalar = all_scalar(pattern, *values)
    rows = 1 if scalar else frame.n
    result = map_distinct_rows([to_array(v, rows) for v in (pattern, *values)], apply)
    return result[0] if scalar else result


HANDLERS = {exp.NumberToStr: eval_format}
FUNCTIONS = {"FORMAT": eval_format}
