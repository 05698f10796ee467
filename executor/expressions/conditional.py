"""Conditional expressions: CASE (searched and simple), IF, IFNULL/NVL/COALESCE, NULLIF.

All branches are evaluated (vectorised, no short-circuit) and cast to one result type,
`casts.union_type` of the branch values. A NULL condition counts as not taken. A simple CASE
compares the operand to each WHEN value with the comparison coercion rules of `=`.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from executor.expressions.casts import cast_value, truthy, union_type
from executor.expressions.comparison import compare
from executor.expressions.context import Frame, Value
from executor.expressions.errors import ExpressionError
from executor.expressions.json_text import json_texts
from executor.expressions.vectors import all_scalar, null_of, to_array
from storage.types import JSON_ARROW, is_json_type


def choose(conditions: list[Value], values: list[Value], default: Value | None,
           frame: Frame) -> Value:
    """Per row, the value of the first true condition, else `default` (else NULL)."""
    branches = values + ([default] if default is not None else [])
    if _any_json(branches):  # chosen among the texts (Arrow's kernels take no extension type)
        texts = [json_texts(cast_value(v, JSON_ARROW)) for v in branches]
        chosen = choose(conditions, texts[:len(values)],
                        texts[-1] if default is not None else None, frame)
        return cast_value(chosen, JSON_ARROW)
    t = union_type(branches)
    if pa.types.is_null(t):
        return null_of(t) if all_scalar(*conditions) else pa.nulls(frame.n, t)
    values = [cast_value(v, t) for v in values]
    default = cast_value(default, t) if default is not None else null_of(t)
    conditions = [pc.coalesce(truthy(c), False) for c in conditions]
    if all_scalar(*conditions):
        for cond, value in zip(conditions, values):
            if cond.as_py():
                return value
        return default
    if len(conditions) == 1:
        return pc.if_else(to_array(conditions[0], frame.n), values[0], default)
    names = [f"c{i}" for i in range(len(conditions))]
    struct = pc.make_struct(*[to_array(c, frame.n) for c in conditions], field_names=names)
    return pc.case_when(struct, *[to_array(v, frame.n) for v in values],
                        to_array(default, frame.n))


def _any_json(values: list[Value]) -> bool:
    return any(is_json_type(v.type) for v in values)


def eval_case(node: exp.Case, frame: Frame) -> Value:
    operand = frame.eval(node.this) if node.this is not None else None
    conditions, values = [], []
    for branch in node.args["ifs"]:
        when = frame.eval(branch.this)
        conditions.append(compare(pc.equal, operand, when) if operand is not None else when)
        values.append(frame.eval(branch.args["true"]))
    default = node.args.get("default")
    return choose(conditions, values, frame.eval(default) if default is not None else None, frame)


def eval_if(node: exp.If, frame: Frame) -> Value:
    otherwise = node.args.get("false")
    return choose([frame.eval(node.this)], [frame.eval(node.args["true"])],
                  frame.eval(otherwise) if otherwise is not None else None, frame)


def eval_coalesce(node: exp.Coalesce, frame: Frame) -> Value:
    values = [frame.eval(e) for e in [node.this, *node.expressions]]
    if _any_json(values):
        texts = [json_texts(cast_value(v, JSON_ARROW)) for v in values]
        return cast_value(pc.coalesce(*texts), JSON_ARROW)
    t = union_type(values)
    if pa.types.is_null(t):
        return values[0]
    return pc.coalesce(*[cast_value(v, t) for v in values])


def eval_nullif(node: exp.Nullif, frame: Frame) -> Value:
    a, b = frame.eval(node.this), frame.eval(node.expression)
    if pa.types.is_null(a.type):
        return a
    equal = pc.coalesce(compare(pc.equal, a, b), False)
    return pc.if_else(equal, null_of(a.type), a)


def eval_subquery_rows_error(node: exp.Anonymous, frame: Frame) -> Value:
    """`__subquery_rows_error(n)` (planner/apply_subqueries.py): a scalar subquery's row counts
    per outer row; any above 1 is MySQL's error 1242, else NULLs."""
    counts = frame.eval(node.expressions[0])
    most = pc.max(counts) if isinstance(counts, (pa.Array, pa.ChunkedArray)) else counts
    if most.is_valid and most.as_py() > 1:
        raise SubqueryRowsError(f"Expected EQ 1 to be returned by expression: subquery returned "
                                f"{most.as_py()} rows")
    return pa.scalar(None, pa.null())


class SubqueryRowsError(ExpressionError):
    code = 1242
    sqlstate = "21000"


FUNCTIONS = {"__SUBQUERY_ROWS_ERROR": eval_subquery_rows_error}

HANDLERS = {exp.Case: eval_case, exp.If: eval_if, exp.Coalesce: eval_coalesce,
            exp.Nullif: eval_nullif}
