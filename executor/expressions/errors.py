"""Errors raised while evaluating scalar expressions.

Each class carries its MySQL error number and SQLSTATE, with the same shape as the catalog's
`DorisError` (`code`, `sqlstate`, `message`, `client_message()`), so the connection loop can turn
them into ERR packets without this package importing the catalog (executor depends on storage
only).
"""

from __future__ import annotations

import pyarrow as pa


class ExpressionError(Exception):
    """An expression cannot be evaluated (bad argument, overflow, unknown column...)."""

    code = 1105
    sqlstate = "HY000"
    doris_prefix = True

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

    def client_message(self) -> str:
        if self.doris_prefix:
            return f"errCode = 2, detailMessage = {self.message}"
        return self.message


class UnknownColumnError(ExpressionError):
    """A column reference names no column of the batch."""

    code = 1054
    sqlstate = "42S22"

    def __init__(self, name: str):
        super().__init__(f"Unknown column '{name}' in 'field list'")
        self.name = name


class UnsupportedExpression(ExpressionError):
    """A node or function this evaluator does not implement (never guessed at)."""

    code = 1235
    sqlstate = "42000"

    def __init__(self, what: str, detail: str = ""):
        text = f"Unsupported expression or function: {what}"
        super().__init__(f"{text} ({detail})" if detail else text)
        self.what = what


class ArithmeticOverflow(ExpressionError):
    """A checked integer or decimal operation left its result type's range."""

    def __init__(self, detail: str = ""):
        super().__init__(f"Arithmetic overflow{': ' + detail if detail else ''}")


class ComplexTypeKey(ExpressionError):
    """An ARRAY (or BITMAP/HLL) value used as a sort or grouping key, which Doris refuses at
    analysis; here the operator that meets the key column refuses it, before any row is
    produced."""

    def __init__(self) -> None:
        super().__init__(
            "Doris hll, bitmap, array, map, struct, jsonb, variant column must use with specific "
            "function, and don't support filter, group by or order by. please run 'help hll' or "
            "'help bitmap' or 'help array' or 'help map' or 'help struct' or 'help jsonb' or "
            "'help variant' in your mysql client.")


def check_key_type(t: pa.DataType) -> None:
    """Refuse a sort / grouping key of a nested Arrow type (ARRAY, MAP, STRUCT) or of JSON
    (Doris 2.1's Type.isOnlyMetricType holds for them)."""
    if pa.types.is_nested(t) or \
            isinstance(t, pa.BaseExtensionType) and t.extension_name == "arrow.json":
        raise ComplexTypeKey()


class JsonComparison(ExpressionError):
    """A comparison with a JSON operand (Nereids ComparisonPredicate refuses it at analysis)."""

    def __init__(self, sql: str) -> None:
        super().__init__(f"comparison predicate could not contains json type: {sql}")
