"""Compare a minidoris result with DuckDB's for the same query.

Rules (the same for the tests and the benchmark):

- NULL equals only NULL; strings and dates compare exactly (a DATE must come back as a date).
- Numbers (int, float, Decimal, in any mix) compare by value: equal within a relative 1e-6, or
  within half a unit in the last place of a DECIMAL result (minidoris returns AVG and decimal
  division as DECIMAL of a fixed scale, as Doris does, where DuckDB returns a DOUBLE: a DECIMAL
  of scale s cannot be closer than 0.5 * 10^-s to the exact value), or within 1e-9 absolute.
- Without ORDER BY the rows compare as multisets. With ORDER BY the rows must come in the same
  order, except that rows tied on every ORDER BY key may come in any order among themselves
  (checked when every key is an output column; otherwise the whole row order must match).
- The row count and the column count must match.
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal

import sqlglot
from sqlglot import exp

REL_TOL = 1e-6
ABS_TOL = 1e-9
MAX_SHOWN = 5


def _is_number(v) -> bool:
    return isinstance(v, (int, float, Decimal)) and not isinstance(v, bool)


def _half_ulp(v) -> float:
    if isinstance(v, Decimal) and v.is_finite():
        exponent = v.as_tuple().exponent
        return 0.5 * 10.0 ** exponent if isinstance(exponent, int) and exponent < 0 else 0.0
    return 0.0


def values_equal(expected, actual) -> bool:
    """DuckDB's value `expected` against minidoris's value `actual`."""
    if expected is None or actual is None:
        return expected is None and actual is None
    if _is_number(expected) and _is_number(actual):
        if isinstance(expected, int) and isinstance(actual, int):
            return expected == actual
        if isinstance(expected, Decimal) and isinstance(actual, Decimal) and expected == actual:
            return True
        e, a = float(expected), float(actual)
        if math.isnan(e) or math.isnan(a):
            return math.isnan(e) and math.isnan(a)
        tol = max(REL_TOL * max(abs(e), abs(a)), _half_ulp(actual) + _half_ulp(expected), ABS_TOL)
        return abs(e - a) <= tol
    if isinstance(expected, dt.datetime) or isinstance(actual, dt.datetime):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, dt.date) and isinstance(actual, dt.date):
        return expected == actual
    return type(expected) is type(actual) and expected == actual


def rows_equal(expected: tuple, actual: tuple) -> bool:
    return len(expected) == len(actual) and all(map(values_equal, expected, actual))


def _sort_key(row: tuple) -> tuple:
    out = []
    for v in row:
        if v is None:
            out.append((0, 0.0, ""))
        elif _is_number(v):
            out.append((1, float(f"{float(v):.8g}"), ""))
        else:
            out.append((2, 0.0, f"{type(v).__name__}:{v}"))
    return tuple(out)


def _multiset_equal(expected: list[tuple], actual: list[tuple]) -> bool:
    a_sorted, e_sorted = sorted(actual, key=_sort_key), sorted(expected, key=_sort_key)
    if all(map(rows_equal, e_sorted, a_sorted)):
        return True
    if len(expected) > 5000:
        return False
    # Numbers within tolerance can straddle a rounding boundary of the sort key: match greedily.
    unmatched = list(a_sorted)
    for row in e_sorted:
        for i, cand in enumerate(unmatched):
            if rows_equal(row, cand):
                del unmatched[i]
                break
        else:
            return False
    return True


def order_key_columns(sql: str, columns: list[str]) -> list[int] | None:
    """Indices of the result columns that the query's outermost ORDER BY sorts on, or None if
    some key is not an output column (or the query cannot be read)."""
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except sqlglot.errors.ParseError:
        return None
    order = tree.args.get("order")
    if order is None:
        return []
    lowered = [c.lower() for c in columns]
    out = []
    for ordered in order.expressions:
        key = ordered.this
        if isinstance(key, exp.Literal) and key.is_int:
            out.append(int(key.this) - 1)
        elif isinstance(key, exp.Column) and key.name.lower() in lowered:
            out.append(lowered.index(key.name.lower()))
        else:
            return None
    return out


def compare_results(sql: str, columns: list[str], expected: list[tuple],
                    actual: list[tuple]) -> str | None:
    """None when `actual` (minidoris) matches `expected` (DuckDB); otherwise what differs."""
    expected, actual = [tuple(r) for r in expected], [tuple(r) for r in actual]
    if len(expected) != len(actual):
        return f"{len(actual)} rows, expected {len(expected)}" + _show(expected, actual)
    if expected and len(expected[0]) != len(actual[0]):
        return f"{len(actual[0])} columns, expected {len(expected[0])}" + _show(expected, actual)
    keys = order_key_columns(sql, columns)
    if keys == []:
        return None if _multiset_equal(expected, actual) else "rows differ" + _show(expected, actual)
    if all(map(rows_equal, expected, actual)):
        return None
    if keys is not None and _multiset_equal(expected, actual) and all(
            rows_equal(tuple(e[i] for i in keys), tuple(a[i] for i in keys))
            for e, a in zip(expected, actual)):
        return None  # only rows tied on every ORDER BY key are permuted
    return "rows differ or come in another order" + _show(expected, actual)


def _show(expected: list[tuple], actual: list[tuple]) -> str:
    lines = []
    for i in range(max(len(expected), len(actual))):
        e = expected[i] if i < len(expected) else None
        a = actual[i] if i < len(actual) else None
        if e is None or a is None or not rows_equal(e, a):
            lines.append(f"  row {i}: minidoris {a!r}\n          duckdb    {e!r}")
            if len(lines) >= MAX_SHOWN:
                break
    return ("\n" + "\n".join(lines)) if lines else ""
