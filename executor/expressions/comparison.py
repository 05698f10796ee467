"""Comparisons and predicates: = != < <= > >= <=>, BETWEEN, IN, IS [NOT] NULL/TRUE/FALSE,
LIKE (with ESCAPE) and REGEXP/RLIKE.

Both sides are cast to `casts.comparison_type` first, so '2017-10-01' = date_col compares dates
and '10' = 10 compares numbers. Strings compare byte-wise, case-sensitively (Doris has no
collations). Results are BOOLEAN with SQL NULL propagation; `<=>` never returns NULL.
`x IN (list)` is TRUE on a match, else NULL if x or any list item is NULL, else FALSE (so
`x NOT IN (1, NULL)` is never TRUE). LIKE patterns and regexes are compiled once per distinct
pattern value.
"""

from __future__ import annotations

import re
from typing import Callable

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from executor.expressions.casts import cast_value, comparison_type, kind, truthy
from executor.expressions.context import Frame, Value
from executor.expressions.errors import ExpressionError, JsonComparison, UnsupportedExpression
from executor.expressions.vectors import map_distinct_params, null_of, on_arrays

_BOOL_NULL = pa.scalar(None, pa.bool_())


def compare(fn: Callable[[Value, Value], Value], a: Value, b: Value) -> Value:
    t = comparison_type(a, b)
    if pa.types.is_null(t):
        return _BOOL_NULL
    return fn(cast_value(a, t), cast_value(b, t))


def refuse_json(node: exp.Expression, *values: Value) -> None:
    """Doris refuses JSON operands of comparisons, IN and BETWEEN at analysis."""
    if any(kind(v.type) == "json" for v in values):
        raise JsonComparison(f"({node.sql(dialect='doris')})")


def _comparison(fn: Callable[[Value, Value], Value]) -> Callable[[exp.Binary, Frame], Value]:
    def handler(node: exp.Binary, frame: Frame) -> Value:
        a, b = frame.eval(node.this), frame.eval(node.expression)
        refuse_json(node, a, b)
        return compare(fn, a, b)
    return handler


def eval_null_safe_eq(node: exp.NullSafeEQ, frame: Frame) -> Value:
    a, b = frame.eval(node.this), frame.eval(node.expression)
    refuse_json(node, a, b)
    both_null = pc.and_(pc.is_null(a), pc.is_null(b))
    return pc.if_else(both_null, True, pc.coalesce(compare(pc.equal, a, b), False))


def eval_null_safe_neq(node: exp.NullSafeNEQ, frame: Frame) -> Value:
    return pc.invert(eval_null_safe_eq(node, frame))


def eval_between(node: exp.Between, frame: Frame) -> Value:
    x = frame.eval(node.this)
    low, high = frame.eval(node.args["low"]), frame.eval(node.args["high"])
    refuse_json(node, x, low, high)
    return pc.and_kleene(compare(pc.greater_equal, x, low), compare(pc.less_equal, x, high))


def eval_in(node: exp.In, frame: Frame) -> Value:
    if node.args.get("query") or node.args.get("unnest") or node.args.get("field"):
        raise UnsupportedExpression("IN (subquery)", "the planner must rewrite it")
    x = frame.eval(node.this)
    items = [frame.eval(e) for e in node.expressions]
    refuse_json(node, x, *items)
    constants = [v for v in items if isinstance(v, pa.Scalar)]
    types = {comparison_type(x, v) for v in items if not pa.types.is_null(v.type)}
    if len(constants) == len(items) and len(types) == 1:
        return _in_constant_list(x, items, types.pop(), frame)
    result: Value = pa.scalar(False)
    for item in items:  # general case: x = i1 OR x = i2 ... with three-valued logic
        result = pc.or_kleene(result, compare(pc.equal, x, item))
    return result


def _in_constant_list(x: Value, items: list[Value], t: pa.DataType, frame: Frame) -> Value:
    values = [cast_value(v, t) for v in items]
    present = [v for v in values if v.is_valid]
    has_null = len(present) < len(values)
    value_set = pa.array([v.as_py() for v in present], type=t)
    x = cast_value(x, t)

    def kernel(arr: pa.Array) -> pa.Array:
        found = pc.is_in(arr, value_set=value_set, skip_nulls=True)
        miss = null_of(pa.bool_()) if has_null else pa.scalar(False)
        return pc.if_else(pc.is_null(arr), null_of(pa.bool_()), pc.if_else(found, True, miss))
    return on_arrays(kernel, x, n=frame.n)


def eval_is(node: exp.Is, frame: Frame) -> Value:
    x = frame.eval(node.this)
    target = node.expression
    if isinstance(target, exp.Null):
        return pc.is_null(x)
    if isinstance(target, exp.Boolean):
        b = truthy(x)
        return pc.coalesce(b if target.this else pc.invert(b), False)
    raise UnsupportedExpression("IS", target.sql(dialect="doris"))


# -- LIKE / REGEXP ---------------------------------------------------------------------------
def like_to_regex(pattern: str, escape: str | None = "\\") -> str:
    """Translate a SQL LIKE pattern (% _ and an escape character) into an RE2 regex for a
    search: anchored at an end unless the pattern has % there (`(?s)^.*x.*$` searches as
    `(?s)x`, a third faster)."""
    tokens = _like_tokens(pattern, escape)
    leading = tokens[:1] == [None]
    trailing = tokens[-1:] == [None]
    while tokens[:1] == [None]:
        tokens.pop(0)
    while tokens[-1:] == [None]:
        tokens.pop()
    body = "".join(".*" if t is None else "." if t == "" else re.escape(t) for t in tokens)
    return f"(?s){'' if leading else '^'}{body}{'' if trailing else '$'}"


def _like_tokens(pattern: str, escape: str | None) -> list[str | None]:
    """The pattern as literal characters, None for % and "" for _."""
    tokens: list[str | None] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if escape and ch == escape and i + 1 < len(pattern):
            tokens.append(pattern[i + 1])
            i += 2
            continue
        tokens.append(None if ch == "%" else "" if ch == "_" else ch)
        i += 1
    return tokens


def _like_kernel(pattern: str, escape: str | None, ignore_case: bool):
    """values -> BOOLEAN for one LIKE pattern: prefix, suffix and exact patterns by Arrow's
    string kernels (several times faster than a regex), the rest by RE2."""
    tokens = _like_tokens(pattern, escape)
    if not ignore_case and "" not in tokens:
        literal = "".join(t for t in tokens if t is not None)
        wild = [i for i, t in enumerate(tokens) if t is None]
        if not wild:
            return lambda values: pc.equal(values, pa.scalar(literal, pa.string()))
        if literal and wild == list(range(len(tokens) - len(wild), len(tokens))):
            return lambda values: pc.starts_with(values, literal)
        if literal and wild == list(range(len(wild))):
            return lambda values: pc.ends_with(values, literal)
    regex = like_to_regex(pattern, escape)
    return lambda values: pc.match_substring_regex(values, pattern=regex, ignore_case=ignore_case)


def _match(subject: Value, pattern: Value, kernel_of: Callable[[str], Callable],
           frame: Frame) -> Value:
    """`kernel_of(pattern)(values)` per distinct pattern; a NULL pattern matches as NULL."""
    subject = cast_value(subject, pa.string())
    pattern = cast_value(pattern, pa.string())

    def kernel(values: Value, pat: str | None) -> Value:
        if pat is None:
            return null_of(pa.bool_()) if isinstance(values, pa.Scalar) else \
                pa.nulls(len(values), pa.bool_())
        try:
            return kernel_of(pat)(values)
        except pa.ArrowInvalid as e:
            raise ExpressionError(f"Invalid regular expression '{pat}': {e}") from e
    return map_distinct_params(kernel, subject, [pattern], pa.bool_(), frame.n)


def _like(node: exp.Like | exp.ILike, frame: Frame, escape: str | None) -> Value:
    ignore_case = isinstance(node, exp.ILike)
    result = _match(frame.eval(node.this), frame.eval(node.expression),
                    lambda p: _like_kernel(p, escape, ignore_case), frame)
    return pc.invert(result) if node.args.get("negate") else result


def eval_like(node: exp.Like, frame: Frame) -> Value:
    return _like(node, frame, "\\")


def eval_escape(node: exp.Escape, frame: Frame) -> Value:
    inner = node.this
    if not isinstance(inner, (exp.Like, exp.ILike)):
        raise UnsupportedExpression("ESCAPE", node.sql(dialect="doris"))
    escape = frame.eval(node.expression)
    if not isinstance(escape, pa.Scalar) or kind(escape.type) != "string" or \
            len(escape.as_py() or "") != 1:
        raise ExpressionError("ESCAPE must be a single character")
    return _like(inner, frame, escape.as_py())


def eval_regexp_like(node: exp.RegexpLike, frame: Frame) -> Value:
    result = _match(frame.eval(node.this), frame.eval(node.expression),
                    lambda p: lambda values: pc.match_substring_regex(values, pattern=p), frame)
    return pc.invert(result) if node.args.get("negate") else result


HANDLERS = {
    exp.EQ: _comparison(pc.equal), exp.NEQ: _comparison(pc.not_equal),
    exp.GT: _comparison(pc.greater), exp.GTE: _comparison(pc.greater_equal),
    exp.LT: _comparison(pc.less), exp.LTE: _comparison(pc.less_equal),
    exp.NullSafeEQ: eval_null_safe_eq, exp.NullSafeNEQ: eval_null_safe_neq,
    exp.Between: eval_between, exp.In: eval_in, exp.Is: eval_is,
    exp.Like: eval_like, exp.ILike: eval_like, exp.Escape: eval_escape,
    exp.RegexpLike: eval_regexp_like,
}
