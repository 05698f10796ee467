"""Shared helpers for the expression evaluator tests: parse a SELECT item with sqlglot's doris
dialect and evaluate it over a batch (a one-row, no-column batch by default)."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import Any

import pyarrow as pa
import sqlglot
from sqlglot import exp

from executor.expressions import EvalContext, evaluate

CTX = EvalContext(now=datetime(2024, 5, 17, 10, 11, 12, 345678), time_zone="Asia/Shanghai")
ONE_ROW = pa.table({"x": pa.array([None], pa.null())}).select([])

# A small table with NULLs in every column, used across the families.
TABLE = pa.table({
    "i": pa.array([1, None, -7, 2], pa.int32()),
    "b": pa.array([10, 20, None, 3], pa.int64()),
    "t": pa.array([1, 2, 0, None], pa.int8()),
    "s": pa.array(["abc", None, "中文", "x,y,z"]),
    "d": pa.array([date(2017, 10, 1), None, date(2020, 1, 31), date(2020, 2, 29)], pa.date32()),
    "dt": pa.array([datetime(2017, 10, 1, 6, 0, 0), None, datetime(2020, 1, 31, 23, 59, 59),
                    datetime(2020, 2, 29, 0, 0, 0, 500)], pa.timestamp("us")),
    "p": pa.array([Decimal("1.50"), Decimal("-2.25"), None, Decimal("0.00")],
                  pa.decimal128(10, 2)),
    "f": pa.array([1.5, None, -0.5, 0.0], pa.float64()),
    "pat": pa.array(["a%", "%", None, "x_y%"]),
})


def parse(sql: str) -> exp.Expression:
    return sqlglot.parse_one(f"SELECT {sql}", read="doris").expressions[0]


def run(sql: str, batch: pa.Table = ONE_ROW, ctx: EvalContext = CTX) -> pa.Array:
    result = evaluate(parse(sql), batch, ctx)
    assert len(result) == batch.num_rows
    return result


def ev(sql: str) -> Any:
    """The Python value of a constant expression."""
    return run(sql)[0].as_py()


def ev_typed(sql: str) -> tuple[pa.DataType, Any]:
    result = run(sql)
    return result.type, result[0].as_py()


def col(sql: str, batch: pa.Table = TABLE) -> list[Any]:
    return run(sql, batch).to_pylist()


def col_type(sql: str, batch: pa.Table = TABLE) -> pa.DataType:
    """The result type, checked to be the same on zero rows."""
    full = run(sql, batch).type
    empty = run(sql, batch.slice(0, 0)).type
    assert full == empty, (full, empty)
    return full
