"""The entry points and the dispatch: sqlglot node class -> handler.

Life of an expression:
1. `evaluate(expr, batch, ctx)` builds a `Frame` (batch + context) and calls `_eval` on the root.
2. `_eval` looks the node's class up in `HANDLERS` (walking the class's MRO, so subclasses share
   a handler) - or, for `exp.Anonymous`, the function name in `FUNCTIONS` - and calls the handler.
3. Handlers evaluate their children through `frame.eval`, coerce them with `casts`, and return an
   Arrow array or, for constant sub-expressions, an Arrow scalar.
4. `evaluate` broadcasts a scalar result to the batch's row count and returns the array.

Leaves (literals, NULL, booleans, column references) are handled here; each family module
(`arithmetic`, `comparison`, `logic`, `conditional`, `strings`, `math_functions`,
`datetime_functions`, `casts`) exports its own `HANDLERS` (and `FUNCTIONS` for names sqlglot
leaves as `exp.Anonymous`), merged below.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any, Callable

import pyarrow as pa
from sqlglot import exp

from executor.expressions import (arithmetic, array_lambdas, arrays, bitmap_functions, bitwise,
                                  casts, ciphers, codecs,
                                  comparison,
                                  conditional, date_round, datetime_functions, epoch_functions,
                                  format_function,
                                  geo_functions,
                                  hashes, ip_functions, ipv6_functions, json_functions, json_modify, jsonb_functions,
                                  logic, maps, match,
                                  math_functions, months_between, objects, string_masks,
                                  string_search, strings,
                                  sleep, text_functions, time_seconds)
from executor.expressions.context import EvalContext, Frame, Value
from executor.expressions.errors import ExpressionError, UnsupportedExpression
from executor.expressions.vectors import to_array

Handler = Callable[[Any, Frame], Value]

# -- leaves --------------------------------------------------------------------------------------
def eval_literal(node: exp.Literal, frame: Frame) -> Value:
    if node.is_string:
        return pa.scalar(node.this, pa.string())
    return casts.number_literal(node.this)


def eval_null(node: exp.Null, frame: Frame) -> Value:
    return pa.scalar(None, pa.null())


def eval_boolean(node: exp.Boolean, frame: Frame) -> Value:
    return pa.scalar(bool(node.this), pa.bool_())


# Unquoted names that MySQL treats as niladic functions when no such column exists.
_NILADIC = {
    "CURRENT_DATE": exp.CurrentDate, "CURRENT_TIMESTAMP": exp.CurrentTimestamp,
    "CURRENT_TIME": exp.CurrentTime, "LOCALTIME": exp.CurrentTimestamp,
    "LOCALTIMESTAMP": exp.CurrentTimestamp,
}


def eval_column(node: exp.Column, frame: Frame) -> Value:
    name = node.name
    if not frame.has_column(name) and not node.this.args.get("quoted"):
        niladic = _NILADIC.get(name.upper())
        if niladic is not None:
            return frame.eval(niladic())
    lazy = frame.lazy_decimal(name)
    return lazy if lazy is not None else casts.normalize_column(frame.column(name))


def eval_paren(node: exp.Paren, frame: Frame) -> Value:
    return frame.eval_raw(node.this)


def eval_alias(node: exp.Alias, frame: Frame) -> Value:
    return frame.eval_raw(node.this)


HANDLERS: dict[type, Handler] = {
    exp.Literal: eval_literal, exp.Null: eval_null, exp.Boolean: eval_boolean,
    exp.Column: eval_column, exp.Paren: eval_paren, exp.Alias: eval_alias,
}
FUNCTIONS: dict[str, Handler] = {}
for _module in (casts, arithmetic, comparison, logic, conditional, strings, math_functions,
                datetime_functions, date_round, months_between, objects, json_functions, codecs,
                string_masks, arrays, jsonb_functions, match, hashes, bitwise, ip_functions,
                text_functions, format_function, sleep, time_seconds, json_modify,
                bitmap_functions, array_lambdas, maps, geo_functions, ciphers, epoch_functions,
                string_search, ipv6_functions):
    HANDLERS.update(_module.HANDLERS)
    FUNCTIONS.update(getattr(_module, "FUNCTIONS", {}))


def _eval(node: exp.Expression, frame: Frame) -> Value:
    if isinstance(node, exp.Anonymous):
        name = str(node.this).upper()
        handler = FUNCTIONS.get(name)
        if handler is None:
            raise UnsupportedExpression(name)
        return handler(node, frame)
    for cls in type(node).__mro__:
        handler = HANDLERS.get(cls)
        if handler is not None:
            try:
                return handler(node, frame)
            except (KeyError, AttributeError, IndexError, TypeError):
                if isinstance(node, exp.Func) and _missing_arguments(node):
                    raise ExpressionError(f"Can not found function '{node.sql_name().lower()}' "
                                          f"which has {_arity(node)} arity.") from None
                raise
        if cls is exp.Expression:
            break
    what = node.sql_name() if isinstance(node, exp.Func) else type(node).__name__
    raise UnsupportedExpression(what, node.sql(dialect="doris")[:80])


def _missing_arguments(node: exp.Func) -> bool:
    """sqlglot left an argument of the call empty (`substr(s)`, `date_add(d)`): the handler
    that failed reading it met a call of the wrong arity, not a bug of its own."""
    return any(node.args.get(key) is None for key in node.arg_types if key != "this") \
        or node.this is None


def _arity(node: exp.Func) -> int:
    return sum(len(v) if isinstance(v, list) else 1 for v in node.args.values()
               if v is not None and not isinstance(v, (bool, str)))


# -- public API ----------------------------------------------------------------------------------
def evaluate(expr: exp.Expression, batch: pa.Table, ctx: EvalContext) -> pa.Array:
    """Evaluate `expr` over `batch`: an array of `batch.num_rows` values typed as Doris would."""
    return evaluate_many([expr], batch, ctx)[0]


def evaluate_many(exprs: list[exp.Expression], batch: pa.Table, ctx: EvalContext,
                  raw: bool = False) -> list:
    """Evaluate each of `exprs` over `batch`, computing every common subexpression once
    (`price * (1 - discount)` in both `sum(price * (1 - discount))` and
    `sum(price * (1 - discount) * (1 + tax))`). `raw`: results may be `decimal_int64.Unscaled`
    (DECIMALs not written out as decimal128, for the aggregates) or scalars (constants)."""
    frame = Frame(batch, ctx, _eval, shared_subexpressions(exprs))
    out = []
    for expr in exprs:
        if raw and isinstance(expr, exp.Column) and frame.has_column(expr.name):
            # A column passes through as it is (chunked), DECIMALs as the frame's Unscaled.
            lazy = frame.lazy_decimal(expr.name)
            out.append(lazy if lazy is not None else batch.column(frame.index(expr.name)))
            continue
        try:
            value = frame.eval_raw(expr) if raw else to_array(frame.eval(expr), frame.n)
        except pa.ArrowException as e:
            raise ExpressionError(
                f"Failed to evaluate {expr.sql(dialect='doris')[:200]}: {e}") from e
        out.append(value)
    return out


# Nodes not worth keeping (their evaluation is a lookup), and the parts of a larger node.
_NOT_SHARED = (exp.Column, exp.Literal, exp.Null, exp.Boolean, exp.Identifier, exp.Var,
               exp.DataType, exp.DataTypeParam, exp.Interval, exp.Star, exp.Paren, exp.Alias)


def shared_subexpressions(exprs: list[exp.Expression]) -> set[exp.Expression]:
    """The computed sub-expressions occurring more than once in `exprs` (equal as sqlglot
    compares trees), none containing a function whose value differs per call (RAND, UUID)."""
    seen: set[exp.Expression] = set()
    shared: set[exp.Expression] = set()
    for expr in exprs:
        for node in expr.walk():
            if isinstance(node, _NOT_SHARED):
                continue
            if node in seen:
                shared.add(node)
            else:
                seen.add(node)
    return {n for n in shared if _deterministic(n)}


def _deterministic(node: exp.Expression) -> bool:
    for sub in node.walk():
        if isinstance(sub, (exp.Rand, exp.Uuid)):
            return False
        if isinstance(sub, exp.Anonymous) and str(sub.this).upper() in _NONDETERMINISTIC:
            return False
    return True


def evaluate_predicate(expr: exp.Expression, batch: pa.Table, ctx: EvalContext) -> pa.Array:
    """Evaluate a WHERE/HAVING/ON condition as BOOLEAN (numbers are true when non-zero); NULL
    stays NULL, so filter with null_selection_behavior='drop'."""
    frame = Frame(batch, ctx, _eval)
    try:
        return to_array(casts.truthy(frame.eval(expr)), frame.n)
    except pa.ArrowException as e:
        raise ExpressionError(f"Failed to evaluate {expr.sql(dialect='doris')[:200]}: {e}") from e


def infer_type(expr: exp.Expression, schema: pa.Schema, ctx: EvalContext) -> pa.DataType:
    """The Arrow (Doris) result type of `expr` over columns of `schema`, by evaluating it on
    zero rows (so it always agrees with `evaluate`)."""
    return evaluate(expr, schema.empty_table(), ctx).type


# One row, no columns: what constant expressions (and SELECT without FROM) evaluate over.
_ONE_ROW = pa.table({"x": pa.array([None], pa.null())}).select([])


def literal_value(expr: exp.Expression, ctx: EvalContext | None = None) -> Any:
    """The Python value of a constant expression (`1+1`, `DATE '2020-01-01'`, `-5`)."""
    return evaluate(expr, _ONE_ROW, ctx or EvalContext())[0].as_py()


# A sub-expression containing one of these is not constant (or not deterministic).
_NOT_FOLDABLE = (exp.Column, exp.Rand, exp.Uuid, exp.AggFunc, exp.Subquery, exp.Query, exp.Star,
                 exp.Placeholder, exp.Parameter, exp.Window)
_NONDETERMINISTIC = {"RAND", "RANDOM", "UUID", "UUID_NUMERIC", "SLEEP"}
# Already literals, or parts of a larger node rather than values (units, types, intervals).
_LEAVES = (exp.Literal, exp.Null, exp.Boolean, exp.Var, exp.DataType, exp.DataTypeParam,
           exp.Interval, exp.Identifier, exp.Tuple)


def _foldable(node: exp.Expression) -> bool:
    for sub in node.walk():
        if isinstance(sub, _NOT_FOLDABLE):
            return False
        if isinstance(sub, exp.Anonymous) and str(sub.this).upper() in _NONDETERMINISTIC:
            return False
    return True


def constant_fold(expr: exp.Expression, ctx: EvalContext) -> exp.Expression:
    """Replace every column-free, deterministic sub-expression by a literal of the same type
    (wrapped in a CAST where the bare literal would type differently). Sub-expressions that
    fail to evaluate are left as they are: the error resurfaces when the query runs."""
    def fold(node: exp.Expression) -> exp.Expression:
        if isinstance(node, _LEAVES) or not _foldable(node):
            return node
        try:
            value = evaluate(node, _ONE_ROW, ctx)[0]
        except ExpressionError:
            return node
        literal = to_literal(value)
        return node if literal is None else literal
    return expr.copy().transform(fold)


def to_literal(value: pa.Scalar) -> exp.Expression | None:
    """A sqlglot expression that evaluates back to exactly `value` (type included)."""
    t = value.type
    if pa.types.is_null(t):
        return exp.Null()
    if not value.is_valid:
        doris = _doris_type_sql(t)
        return exp.Cast(this=exp.Null(), to=exp.DataType.build(doris, dialect="doris")) \
            if doris else None
    v = value.as_py()
    if pa.types.is_boolean(t):
        return exp.Boolean(this=v)
    if t == pa.int64() and v >= 0:
        return exp.Literal.number(v)
    if pa.types.is_string(t):
        return exp.Literal.string(v)
    if pa.types.is_floating(t) and (v != v or v in (float("inf"), float("-inf"))):
        return None
    if isinstance(v, datetime):
        text = v.isoformat(sep=" ")
    elif isinstance(v, date):
        text = v.isoformat()
    else:
        text = str(v)
    doris = _doris_type_sql(t)
    if doris is None:
        return None
    inner: exp.Expression = exp.Literal.string(text) if isinstance(v, (date, datetime)) \
        else exp.Literal.number(text)
    return exp.Cast(this=inner, to=exp.DataType.build(doris, dialect="doris"))


def _doris_type_sql(t: pa.DataType) -> str | None:
    if pa.types.is_decimal(t):
        return f"DECIMAL({t.precision}, {t.scale})"
    names = {pa.int8(): "TINYINT", pa.int16(): "SMALLINT", pa.int32(): "INT",
             pa.int64(): "BIGINT", pa.float32(): "FLOAT", pa.float64(): "DOUBLE",
             pa.bool_(): "BOOLEAN", pa.string(): "VARCHAR", pa.date32(): "DATE",
             pa.timestamp("us"): "DATETIME(6)"}
    return names.get(t)
