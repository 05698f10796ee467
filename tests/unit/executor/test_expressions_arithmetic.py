"""Arithmetic: MySQL/Doris typing of + - * / % DIV, NULL and division by zero."""

from decimal import Decimal

import pyarrow as pa
import pytest

from executor.expressions import ArithmeticOverflow, ExpressionError
from expr_helpers import col, col_type, ev, ev_typed


@pytest.mark.parametrize("sql, expected_type, expected", [
    ("1 + 1", pa.int64(), 2),
    ("7 / 2", pa.float64(), 3.5),
    ("7 DIV 2", pa.int64(), 3),
    ("-7 DIV 2", pa.int64(), -3),
    ("7 % 3", pa.int64(), 1),
    ("-7 % 3", pa.int64(), -1),
    ("7 % -3", pa.int64(), 1),
    ("MOD(10, 3)", pa.int64(), 1),
    ("1 / 0", pa.float64(), None),
    ("1 % 0", pa.int64(), None),
    ("1 DIV 0", pa.int64(), None),
    ("1.5 / 0", pa.decimal128(6, 5), None),
    ("1e0 / 0", pa.float64(), None),
    ("NULL + 1", pa.int64(), None),
    ("'3' + 1", pa.float64(), 4.0),
    ("'abc' + 1", pa.float64(), None),
    ("7.5 DIV 2", pa.int64(), 3),
    ("-(-5)", pa.int64(), 5),
    ("1e3 + 1", pa.float64(), 1001.0),
    ("5 & 3", pa.int64(), 1),
    ("5 | 3", pa.int64(), 7),
    ("5 ^ 3", pa.int64(), 6),
    ("~0", pa.int64(), -1),
    ("1 << 4", pa.int64(), 16),
])
def test_scalar_arithmetic(sql, expected_type, expected):
    assert ev_typed(sql) == (expected_type, expected)


@pytest.mark.parametrize("sql, expected_type, expected", [
    # Doris: literal 1.5 is DECIMAL(2,1); an integer literal joins as its smallest int type.
    ("1.5", pa.decimal128(2, 1), Decimal("1.5")),
    ("0.05", pa.decimal128(2, 2), Decimal("0.05")),
    ("1.5 + 1.25", pa.decimal128(4, 2), Decimal("2.75")),
    ("1.5 - 2", pa.decimal128(5, 1), Decimal("-0.5")),
    ("1.5 * 2", pa.decimal128(5, 1), Decimal("3.0")),
    ("1.25 * 1.5", pa.decimal128(5, 3), Decimal("1.875")),
    ("1.0 / 3", pa.decimal128(6, 5), Decimal("0.33333")),
    ("2.0 / 3", pa.decimal128(6, 5), Decimal("0.66666")),   # truncated, as Doris
    ("10 % 3.5", pa.decimal128(4, 1), Decimal("3.0")),
    ("-10.5 % 3", pa.decimal128(4, 1), Decimal("-1.5")),
    ("1.5 + 1e0", pa.float64(), 2.5),
    ("99999999999999999999 + 1", pa.decimal128(38, 0), Decimal("100000000000000000000")),
])
def test_decimal_typing(sql, expected_type, expected):
    assert ev_typed(sql) == (expected_type, expected)


def test_column_arithmetic_types_and_nulls():
    assert col("i + 1") == [2, None, -6, 3]
    assert col_type("i + 1") == pa.int64()
    assert col("i / t") == [1.0, None, None, None]
    assert col_type("i / t") == pa.float64()
    assert col("i % t") == [0, None, None, None]
    assert col_type("i % t") == pa.int32()
    assert col("i DIV t") == [1, None, None, None]
    assert col("-i") == [-1, None, 7, -2]
    assert col("p * 2") == [Decimal("3.00"), Decimal("-4.50"), None, Decimal("0.00")]
    assert col_type("p * 2") == pa.decimal128(13, 2)
    assert col("p / t") == [Decimal("1.500000"), Decimal("-1.125000"), None, None]
    assert col_type("p / t") == pa.decimal128(14, 6)
    assert col("p % t") == [Decimal("0.50"), Decimal("-0.25"), None, None]
    assert col("p + f") == [3.0, None, None, 0.0]
    assert col_type("p + f") == pa.float64()


def test_bigint_constant_overflow_is_a_largeint():
    # Doris promotes BIGINT + - * BIGINT to LARGEINT (held as DECIMAL(38, 0))
    assert ev_typed("9223372036854775807 + 1") == (pa.decimal128(38, 0),
                                                   Decimal("9223372036854775808"))
    assert ev("-9223372036854775807 - 2") == Decimal("-9223372036854775809")
    assert ev("9223372036854775807 * 9223372036854775807") == Decimal((2 ** 63 - 1) ** 2)
    assert ev("-CAST(-9223372036854775808 AS BIGINT)") == Decimal(2 ** 63)
    assert ev("abs(CAST(-9223372036854775808 AS BIGINT))") == Decimal(2 ** 63)
    assert ev_typed("9223372036854775806 + 1") == (pa.int64(), 2 ** 63 - 1)


def test_bigint_column_overflow_is_checked():
    with pytest.raises(ArithmeticOverflow):
        col("b * 9223372036854775807")
    with pytest.raises(ArithmeticOverflow):
        col("-b - 9223372036854775807")


def test_decimal_overflow_raises():
    with pytest.raises(ArithmeticOverflow):
        ev("99999999999999999999999999999999999999 * 10")


def test_date_arithmetic_without_interval_is_rejected():
    with pytest.raises(ExpressionError):
        ev("DATE '2020-01-02' - DATE '2020-01-01'")


def test_duckdb_agrees_on_double_arithmetic():
    duckdb = pytest.importorskip("duckdb")
    for sql in ["7 / 2", "10.0e0 / 4", "2e0 * 3.25e0 - 1", "POWER(2, 10)", "SQRT(2)",
                "EXP(1)", "LN(10)", "ABS(-3.5e0)"]:
        expected = duckdb.connect().execute(f"SELECT {sql}").fetchone()[0]
        assert ev(sql) == pytest.approx(float(expected), rel=1e-15), sql


@pytest.mark.parametrize("sql, expected_type, expected", [
    ("-9223372036854775808", pa.int64(), -9223372036854775808),
    ("-1.50", pa.decimal128(3, 2), Decimal("-1.50")),
    # Doris overflow scales: p = 38+10+4 > 38, p - s1 >= 32 and s1 < 6 -> scale s1 + 4.
    ("CAST(1 AS DECIMAL(38,0)) / CAST(3 AS DECIMAL(38,10))", pa.decimal128(38, 4),
     Decimal("0.3333")),
    ("CAST(10 AS DECIMAL(38,5)) % CAST(3 AS DECIMAL(38,10))", pa.decimal128(38, 5),
     Decimal("1.00000")),
    ("CAST(2 AS DECIMAL(20,5)) * CAST(3 AS DECIMAL(21,6))", pa.decimal128(38, 8),
     Decimal("6.00000000")),
    ("CAST(1 AS DECIMAL(38,0)) / CAST(0 AS DECIMAL(38,10))", pa.decimal128(38, 4), None),
])
def test_wide_decimals(sql, expected_type, expected):
    assert ev_typed(sql) == (expected_type, expected)
