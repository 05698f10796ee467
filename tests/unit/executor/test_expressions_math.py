"""Math functions: typing, rounding half away from zero, domain errors as NULL."""

import math
from decimal import Decimal

import pyarrow as pa
import pytest

from expr_helpers import col, col_type, ev_typed


@pytest.mark.parametrize("sql, expected_type, expected", [
    ("ABS(-5)", pa.int64(), 5),
    ("ABS(-1.5)", pa.decimal128(2, 1), Decimal("1.5")),
    ("ABS(-2.5e0)", pa.float64(), 2.5),
    ("ABS(NULL)", pa.float64(), None),
    ("CEIL(1.2)", pa.decimal128(2, 0), Decimal("2")),
    ("CEILING(-1.2)", pa.decimal128(2, 0), Decimal("-1")),
    ("FLOOR(-1.2)", pa.decimal128(2, 0), Decimal("-2")),
    ("CEIL(1.2e0)", pa.float64(), 2.0),
    ("FLOOR(7)", pa.int64(), 7),
    ("CEIL(123.456, 2)", pa.decimal128(6, 2), Decimal("123.46")),
    ("FLOOR(123.456, -1)", pa.decimal128(6, 0), Decimal("120")),
    ("ROUND(2.5)", pa.decimal128(2, 0), Decimal("3")),
    ("ROUND(-2.5)", pa.decimal128(2, 0), Decimal("-3")),
    ("ROUND(1.2345, 2)", pa.decimal128(5, 2), Decimal("1.23")),
    ("ROUND(1.235, 2)", pa.decimal128(4, 2), Decimal("1.24")),
    ("ROUND(2.5e0)", pa.float64(), 3.0),
    ("ROUND(-0.5e0)", pa.float64(), -1.0),
    ("ROUND(125, -1)", pa.int64(), 130),
    ("ROUND(125)", pa.int64(), 125),
    ("ROUND(1.5, NULL)", pa.decimal128(2, 1), None),
    ("TRUNCATE(1.999, 2)", pa.decimal128(4, 2), Decimal("1.99")),
    ("TRUNCATE(-1.999e0, 1)", pa.float64(), -1.9),
    ("TRUNCATE(1.9, 0)", pa.decimal128(2, 0), Decimal("1")),
    ("POW(2, 10)", pa.float64(), 1024.0),
    ("POWER(4, 0.5)", pa.float64(), 2.0),
    ("POW(-8, 0.5)", pa.float64(), None),
    ("SQRT(16)", pa.float64(), 4.0),
    ("SQRT(-1)", pa.float64(), None),
    ("EXP(0)", pa.float64(), 1.0),
    ("LN(1)", pa.float64(), 0.0),
    ("LN(0)", pa.float64(), None),
    ("LOG(100)", pa.float64(), math.log(100)),
    ("LOG(2, 8)", pa.float64(), 3.0),
    ("LOG(1, 8)", pa.float64(), None),
    ("LOG2(8)", pa.float64(), 3.0),
    ("LOG10(1000)", pa.float64(), 3.0),
    ("LOG10(-1)", pa.float64(), None),
    ("SIGN(-3)", pa.int8(), -1),
    ("SIGN(0.0)", pa.int8(), 0),
    ("SIGN(NULL)", pa.int8(), None),
    ("PI()", pa.float64(), math.pi),
    ("GREATEST(1, 2.5, 3)", pa.decimal128(4, 1), Decimal("3.0")),
    ("GREATEST(1, 2)", pa.int64(), 2),
    ("LEAST(1, NULL)", pa.int64(), None),
    ("GREATEST('a', 'b')", pa.string(), "b"),
    ("LEAST(DATE '2020-01-02', DATE '2020-01-01')", pa.date32(),
     __import__("datetime").date(2020, 1, 1)),
    ("DEGREES(PI())", pa.float64(), 180.0),
    ("SIN(0)", pa.float64(), 0.0),
    ("CBRT(27)", pa.float64(), 3.0),
    ("FMOD(7.5, 2)", pa.float64(), 1.5),
    ("PMOD(-7, 3)", pa.float64(), 2.0),
])
def test_math(sql, expected_type, expected):
    actual_type, actual = ev_typed(sql)
    assert actual_type == expected_type
    if isinstance(expected, float):
        # libm results may differ in the last ulp between platforms (cbrt, sin).
        assert actual == pytest.approx(expected, rel=1e-15, abs=1e-300)
    else:
        assert actual == expected


def test_math_over_columns():
    assert col("ROUND(p, 1)") == [Decimal("1.5"), Decimal("-2.3"), None, Decimal("0.0")]
    assert col_type("ROUND(p, 1)") == pa.decimal128(10, 1)
    assert col("ROUND(f)") == [2.0, None, -1.0, 0.0]
    assert col("ABS(i)") == [1, None, 7, 2]
    assert col_type("ABS(i)") == pa.int64()
    assert col("GREATEST(i, t)") == [1, None, 0, None]
    assert col_type("GREATEST(i, t)") == pa.int32()
    assert col("ROUND(f, t)") == [1.5, None, -1.0, None]


def test_rand_has_one_value_per_row():
    values = col("RAND()")
    assert len(values) == 4 and all(0.0 <= v < 1.0 for v in values)
    assert col("RAND(7)") == col("RAND(7)")
