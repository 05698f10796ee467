"""Comparisons, implicit casts, IN/BETWEEN/IS, LIKE/REGEXP and three-valued logic."""

import pyarrow as pa
import pytest

from executor.expressions import ExpressionError
from expr_helpers import col, col_type, ev, ev_typed


@pytest.mark.parametrize("sql, expected", [
    ("1 = 1.0", True),
    ("1 <> 2", True),
    ("1 != 1", False),
    ("2 >= 2", True),
    ("'a' < 'b'", True),
    ("'B' < 'a'", True),           # byte-wise, case-sensitive
    ("'abc' = 'ABC'", False),
    ("'10' = 10", True),           # string vs number compares as DOUBLE
    ("'10' > 9", True),
    ("'abc' = 0", None),           # non-numeric text is NULL in Doris casts
    ("NULL = NULL", None),
    ("1 = NULL", None),
    ("NULL <=> NULL", True),
    ("1 <=> NULL", False),
    ("1 <=> 1", True),
    ("DATE '2020-01-01' = '2020-01-01'", True),
    ("DATE '2020-01-01' < TIMESTAMP '2020-01-01 00:00:01'", True),
    ("1.10 = 1.1", True),
])
def test_comparisons(sql, expected):
    assert ev_typed(sql) == (pa.bool_(), expected)


def test_string_literal_against_temporal_columns():
    assert col("d = '2017-10-01'") == [True, None, False, False]
    assert col("'2017-10-01' = d") == [True, None, False, False]
    assert col("dt >= '2017-10-01 06:00:00'") == [True, None, True, True]
    assert col("dt > '2017-10-01'") == [True, None, True, True]
    assert col("d < dt") == [True, None, True, True]
    assert col("d = dt") == [False, None, False, False]  # DATE vs DATETIME as DATETIME
    assert col("d = DATE(dt)") == [True, None, True, True]
    assert col_type("d = '2017-10-01'") == pa.bool_()


@pytest.mark.parametrize("sql, expected", [
    ("2 BETWEEN 1 AND 3", True),
    ("2 NOT BETWEEN 1 AND 3", False),
    ("NULL BETWEEN 1 AND 3", None),
    ("5 BETWEEN 1 AND NULL", None),    # TRUE AND NULL
    ("0 BETWEEN 1 AND NULL", False),   # FALSE AND NULL
    ("1 IN (1, 2)", True),
    ("3 IN (1, 2)", False),
    ("1 IN (1, NULL)", True),
    ("2 IN (1, NULL)", None),
    ("2 NOT IN (1, NULL)", None),      # never TRUE with a NULL in the list
    ("3 NOT IN (1, 2)", True),
    ("NULL IN (1, 2)", None),
    ("'1' IN (1, 2)", True),
    ("1.5 IN (1.5, 2)", True),
])
def test_between_and_in(sql, expected):
    assert ev(sql) == expected


def test_in_with_columns():
    assert col("i IN (1, 2)") == [True, None, False, True]
    assert col("i NOT IN (1, 2)") == [False, None, True, False]
    assert col("i IN (1, NULL)") == [True, None, None, None]
    assert col("s IN ('abc', 'x,y,z')") == [True, None, False, True]
    assert col("1 IN (i, t)") == [True, None, False, None]


@pytest.mark.parametrize("sql, expected", [
    ("NULL IS NULL", True),
    ("1 IS NULL", False),
    ("1 IS NOT NULL", True),
    ("1 IS TRUE", True),
    ("0 IS TRUE", False),
    ("NULL IS TRUE", False),
    ("NULL IS NOT TRUE", True),
    ("0 IS FALSE", True),
    ("NULL IS FALSE", False),
    ("0 IS NOT FALSE", False),
])
def test_is(sql, expected):
    assert ev(sql) is expected


@pytest.mark.parametrize("sql, expected", [
    ("'abc' LIKE 'a%'", True),
    ("'ABC' LIKE 'a%'", False),       # case-sensitive in Doris
    ("'abc' LIKE 'a_c'", True),
    ("'abc' LIKE 'a_'", False),
    ("'a_c' LIKE 'a\\_c'", True),
    ("'abc' LIKE 'a\\_c'", False),
    ("'50%' LIKE '50\\%'", True),
    ("'a%c' LIKE 'a!%c' ESCAPE '!'", True),
    ("'abc' LIKE 'a!%c' ESCAPE '!'", False),
    ("'abc' NOT LIKE '%b%'", False),
    ("'a.c' LIKE 'a.c'", True),
    ("'abc' LIKE 'a.c'", False),      # regex metacharacters are literal
    ("'line1\nline2' LIKE 'line1%'", True),
    ("NULL LIKE 'a'", None),
    ("'a' LIKE NULL", None),
    ("'abc' REGEXP '^a.c$'", True),
    ("'abc' RLIKE 'B'", False),
    ("'abc' NOT REGEXP 'z'", True),
])
def test_like_and_regexp(sql, expected):
    assert ev(sql) == expected


def test_like_with_per_row_patterns():
    assert col("s LIKE pat") == [True, None, None, True]


def test_invalid_regexp_is_an_error():
    with pytest.raises(ExpressionError):
        ev("'a' REGEXP '('")


@pytest.mark.parametrize("sql, expected", [
    ("TRUE AND NULL", None),
    ("FALSE AND NULL", False),
    ("TRUE OR NULL", True),
    ("FALSE OR NULL", None),
    ("NOT NULL", None),
    ("NOT 0", True),
    ("1 XOR 1", False),
    ("1 XOR 0", True),
    ("1 XOR NULL", None),
    ("2 AND 0.5", True),              # numbers are true when non-zero
    ("2 AND 'x'", None),              # 'x' is no number: NULL, and TRUE AND NULL is NULL
])
def test_three_valued_logic(sql, expected):
    assert ev_typed(sql) == (pa.bool_(), expected)


def test_logic_over_columns():
    assert col("i > 0 AND s IS NOT NULL") == [True, False, False, True]
    assert col("i > 0 OR s IS NULL") == [True, True, False, True]
    assert col("NOT (i > 0)") == [False, None, True, False]
