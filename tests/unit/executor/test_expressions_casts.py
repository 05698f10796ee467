"""CAST/CONVERT (Doris non-strict rules) and conditional expressions."""

from datetime import date, datetime
from decimal import Decimal

import pyarrow as pa
import pytest

from executor.expressions import UnsupportedExpression
from expr_helpers import col, col_type, ev, ev_typed


@pytest.mark.parametrize("sql, expected_type, expected", [
    ("CAST('12' AS INT)", pa.int32(), 12),
    ("CAST(' -12 ' AS BIGINT)", pa.int64(), -12),
    ("CAST('+5' AS INT)", pa.int32(), 5),
    ("CAST('12abc' AS INT)", pa.int32(), None),
    ("CAST(' 1.9 ' AS INT)", pa.int32(), 1),
    ("CAST('1e2' AS INT)", pa.int32(), None),  # Doris's BE reads no exponent into an integer
    ("CAST('3.' AS INT)", pa.int32(), 3),
    ("CAST('.5' AS INT)", pa.int32(), None),
    ("CAST('0x10' AS INT)", pa.int32(), None),
    ("CAST(300 AS TINYINT)", pa.int8(), None),
    ("CAST(-1.9 AS BIGINT)", pa.int64(), -1),
    ("CAST(2.5e0 AS INT)", pa.int32(), 2),
    ("CAST(TRUE AS INT)", pa.int32(), 1),
    ("CAST(1 AS SIGNED)", pa.int64(), 1),
    ("CAST('1.255' AS DECIMAL(10,2))", pa.decimal128(10, 2), Decimal("1.26")),
    ("CAST(1.255 AS DECIMAL(10,2))", pa.decimal128(10, 2), Decimal("1.26")),
    ("CAST(-1.255 AS DECIMAL(10,2))", pa.decimal128(10, 2), Decimal("-1.26")),
    ("CAST(12345.6 AS DECIMAL(4,1))", pa.decimal128(4, 1), None),
    ("CAST(7 AS DECIMAL(5,2))", pa.decimal128(5, 2), Decimal("7.00")),
    ("CAST(0.1e0 AS DECIMAL(5,2))", pa.decimal128(5, 2), Decimal("0.10")),
    ("CAST(1.5 AS DECIMAL)", pa.decimal128(9, 0), Decimal("2")),
    ("CAST('abc' AS DECIMAL(5,2))", pa.decimal128(5, 2), None),
    ("CAST('1.5' AS DOUBLE)", pa.float64(), 1.5),
    ("CAST('1e3' AS DOUBLE)", pa.float64(), 1000.0),
    ("CAST('x' AS DOUBLE)", pa.float64(), None),
    ("CAST(-1.7 AS DOUBLE)", pa.float64(), -1.7),
    ("CAST(1.5 AS FLOAT)", pa.float32(), 1.5),
    ("CAST(1 AS VARCHAR(10))", pa.string(), "1"),
    ("CAST(1.50 AS CHAR)", pa.string(), "1.50"),
    ("CAST(2.5e0 AS STRING)", pa.string(), "2.5"),
    ("CAST(TRUE AS STRING)", pa.string(), "1"),
    ("CAST(DATE '2020-01-02' AS STRING)", pa.string(), "2020-01-02"),
    ("CAST(TIMESTAMP '2020-01-02 03:04:05' AS STRING)", pa.string(), "2020-01-02 03:04:05"),
    ("CAST('2020-01-02' AS DATE)", pa.date32(), date(2020, 1, 2)),
    ("CAST('2020/1/2' AS DATE)", pa.date32(), date(2020, 1, 2)),
    ("CAST('20200102' AS DATE)", pa.date32(), date(2020, 1, 2)),
    ("CAST('2020-01-02 10:00:00' AS DATE)", pa.date32(), date(2020, 1, 2)),
    ("CAST('2020-02-30' AS DATE)", pa.date32(), None),
    ("CAST('abc' AS DATE)", pa.date32(), None),
    ("CAST(20200102 AS DATE)", pa.date32(), date(2020, 1, 2)),
    ("CAST('2020-1-2 3:04:05' AS DATETIME)", pa.timestamp("us"), datetime(2020, 1, 2, 3, 4, 5)),
    ("CAST('2020-01-02T03:04:05.123' AS DATETIME(3))", pa.timestamp("us"),
     datetime(2020, 1, 2, 3, 4, 5, 123000)),
    ("CAST(DATE '2020-01-02' AS DATETIME)", pa.timestamp("us"), datetime(2020, 1, 2)),
    ("CAST(DATE '2020-01-02' AS INT)", pa.int32(), 20200102),
    ("CAST(TIMESTAMP '2020-01-02 03:04:05' AS BIGINT)", pa.int64(), 20200102030405),
    ("CAST('true' AS BOOLEAN)", pa.bool_(), True),
    ("CAST('0' AS BOOLEAN)", pa.bool_(), False),
    ("CAST(2 AS BOOLEAN)", pa.bool_(), True),
    ("CAST(NULL AS INT)", pa.int32(), None),
    ("CONVERT('12', INT)", pa.int32(), 12),
    ("CONVERT('a' USING utf8)", pa.string(), "a"),
    ("DATE '2020-01-01'", pa.date32(), date(2020, 1, 1)),
    ("TIMESTAMP '2020-01-01 10:00:00'", pa.timestamp("us"), datetime(2020, 1, 1, 10)),
])
def test_cast(sql, expected_type, expected):
    assert ev_typed(sql) == (expected_type, expected)


def test_cast_columns():
    assert col("CAST(dt AS STRING)") == ["2017-10-01 06:00:00", None, "2020-01-31 23:59:59",
                                         "2020-02-29 00:00:00.000500"]
    assert col("CAST(s AS INT)") == [None, None, None, None]
    assert col("CAST(p AS INT)") == [1, -2, None, 0]
    assert col("CAST(i AS STRING)") == ["1", None, "-7", "2"]
    assert col_type("CAST(i AS DECIMAL(12, 3))") == pa.decimal128(12, 3)


def test_unsupported_cast_target():
    with pytest.raises(UnsupportedExpression):
        ev("CAST('a' AS VARIANT)")


def test_cast_text_to_map_and_struct():
    assert ev("CAST('{1: 2, 3: \"x\"}' AS MAP<INT, INT>)") == [(1, 2), (3, None)]
    assert ev("CAST('{7, \"a\"}' AS STRUCT<f:INT, g:STRING>)") == {"f": 7, "g": "a"}
    assert ev("CAST('not a map' AS MAP<INT, INT>)") is None


def test_cast_to_json_normalizes_text_and_gives_null_for_non_json():
    assert ev("CAST('{\"a\": [1, 2]}' AS JSON)") == '{"a":[1,2]}'
    assert ev("CAST('nope' AS JSONB)") is None
    assert ev("CAST(CAST('[1, 2]' AS JSON) AS STRING)") == "[1,2]"


@pytest.mark.parametrize("sql, expected_type, expected", [
    ("CASE 1 WHEN 1 THEN 'a' WHEN 2 THEN 'b' END", pa.string(), "a"),
    ("CASE 3 WHEN 1 THEN 'a' END", pa.string(), None),
    ("CASE WHEN 1 > 2 THEN 1 ELSE 2.5 END", pa.decimal128(4, 1), Decimal("2.5")),
    ("CASE WHEN NULL THEN 1 ELSE 2 END", pa.int64(), 2),
    ("CASE WHEN 1 THEN 'x' END", pa.string(), "x"),
    ("CASE NULL WHEN NULL THEN 1 ELSE 0 END", pa.int64(), 0),
    ("CASE WHEN 1 = 1 THEN 1 ELSE 'a' END", pa.string(), "1"),
    ("IF(1 > 0, 'y', 'n')", pa.string(), "y"),
    ("IF(NULL, 1, 2)", pa.int64(), 2),
    ("IF(1, 1, 2.5e0)", pa.float64(), 1.0),
    ("IF(0, DATE '2020-01-01', TIMESTAMP '2020-01-01 10:00:00')", pa.timestamp("us"),
     datetime(2020, 1, 1, 10)),
    ("IFNULL(NULL, 3)", pa.int64(), 3),
    ("IFNULL(1, 3)", pa.int64(), 1),
    ("NVL(NULL, 'x')", pa.string(), "x"),
    ("COALESCE(NULL, NULL, 2)", pa.int64(), 2),
    ("COALESCE(NULL, NULL)", pa.null(), None),
    ("NULLIF(1, 1)", pa.int64(), None),
    ("NULLIF(1, 2)", pa.int64(), 1),
    ("NULLIF('a', 'A')", pa.string(), "a"),
])
def test_conditionals(sql, expected_type, expected):
    assert ev_typed(sql) == (expected_type, expected)


def test_conditionals_over_columns():
    assert col("CASE WHEN i > 0 THEN s ELSE 'neg' END") == ["abc", "neg", "neg", "x,y,z"]
    assert col("CASE i WHEN 1 THEN 'one' WHEN -7 THEN 'm7' END") == ["one", None, "m7", None]
    assert col("CASE WHEN i > 1 THEN 'big' WHEN i > 0 THEN 'small' ELSE 'other' END") == [
        "small", "other", "other", "big"]
    assert col("IF(i > 0, p, f)") == [1.5, None, -0.5, 0.0]
    assert col_type("IF(i > 0, p, f)") == pa.float64()
    assert col("COALESCE(i, b, 0)") == [1, 20, -7, 2]
    assert col_type("COALESCE(i, b, 0)") == pa.int64()
    assert col("IFNULL(s, 'none')") == ["abc", "none", "中文", "x,y,z"]
    assert col("NULLIF(i, 1)") == [None, None, -7, 2]
