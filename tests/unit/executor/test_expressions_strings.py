"""String functions: MySQL/Doris semantics, NULL handling, characters vs bytes."""

import hashlib

import pyarrow as pa
import pytest

from expr_helpers import col, col_type, ev, ev_typed


@pytest.mark.parametrize("sql, expected", [
    ("CONCAT('a', 'b', 'c')", "abc"),
    ("CONCAT('a', NULL)", None),
    ("CONCAT('a', 1, 2.50)", "a12.50"),
    ("CONCAT_WS(',', 'a', NULL, 'b')", "a,b"),
    ("CONCAT_WS(NULL, 'a', 'b')", None),
    ("CONCAT_WS('-', NULL)", ""),
    ("SUBSTR('hello', 2)", "ello"),
    ("SUBSTR('hello', 2, 3)", "ell"),
    ("SUBSTRING('hello', -3)", "llo"),
    ("SUBSTRING('hello', -3, 2)", "ll"),
    ("SUBSTR('hello', -7)", ""),
    ("SUBSTR('hello', 0)", ""),
    ("SUBSTR('hello', 2, 0)", ""),
    ("SUBSTR('hello', 9)", ""),
    ("SUBSTRING('中文abc', 2, 2)", "文a"),
    ("SUBSTR(NULL, 1)", None),
    ("SUBSTR('abc', NULL)", None),
    ("MID('hello', 2, 2)", "el"),
    ("LEFT('hello', 2)", "he"),
    ("LEFT('hello', -1)", ""),
    ("RIGHT('hello', 2)", "lo"),
    ("RIGHT('hi', 5)", "hi"),
    ("STRLEFT('hello', 3)", "hel"),
    ("STRRIGHT('hello', 3)", "llo"),
    ("UPPER('abc中')", "ABC中"),
    ("UCASE('abc')", "ABC"),
    ("LOWER('ABC')", "abc"),
    ("LCASE('ABC')", "abc"),
    ("TRIM('  a b  ')", "a b"),
    ("LTRIM('  a  ')", "a  "),
    ("RTRIM('  a  ')", "  a"),
    ("TRIM('\ta ')", "\ta"),                  # spaces only, as MySQL
    ("TRIM(BOTH 'xy' FROM 'xyxyaxy')", "a"),
    ("TRIM(LEADING 'x' FROM 'xxax')", "ax"),
    ("TRIM(TRAILING 'x' FROM 'xxax')", "xxa"),
    ("REPLACE('abcabc', 'b', 'X')", "aXcaXc"),
    ("REPLACE('abc', '', 'X')", "abc"),
    ("REPLACE('a.c', '.', '')", "ac"),
    ("SPLIT_PART('a,b,c', ',', 2)", "b"),
    ("SPLIT_PART('a,b,c', ',', -1)", "c"),
    ("SPLIT_PART('a,b,c', ',', 4)", None),
    ("SPLIT_PART('abc##123###234', '##', -1)", "234"),
    ("LPAD('hi', 5, 'xy')", "xyxhi"),
    ("RPAD('hi', 5, 'xy')", "hixyx"),
    ("LPAD('hello', 3, 'x')", "hel"),
    ("RPAD('hello', 3, 'x')", "hel"),
    ("LPAD('hi', 5, '')", ""),
    ("LPAD('hi', -1, 'x')", None),
    ("LPAD('中', 3, '文')", "文文中"),
    ("REVERSE('abc中')", "中cba"),
    ("INSTR('foobar', 'bar')", 4),
    ("INSTR('中文bar', 'bar')", 3),
    ("INSTR('foobar', 'x')", 0),
    ("INSTR('abc', '')", 1),
    ("LOCATE('bar', 'foobarbar')", 4),
    ("LOCATE('bar', 'foobarbar', 5)", 7),
    ("LOCATE('B', 'abc')", 0),                # case-sensitive
    ("POSITION('b' IN 'abc')", 2),
    ("STARTS_WITH('abc', 'ab')", True),
    ("ENDS_WITH('abc', 'ab')", False),
    ("REPEAT('ab', 3)", "ababab"),
    ("REPEAT('ab', 0)", ""),
    ("REPEAT('ab', -1)", ""),
    ("SPACE(2)", "  "),
    ("ASCII('A')", 65),
    ("ASCII('abc')", 97),
    ("ASCII('')", 0),
    ("SUBSTRING_INDEX('a.b.c', '.', 2)", "a.b"),
    ("SUBSTRING_INDEX('a.b.c', '.', -2)", "b.c"),
    ("SUBSTRING_INDEX('a.b.c', '.', 0)", ""),
    ("REGEXP_REPLACE('a1b22', '[0-9]+', 'X')", "aXbX"),
    ("NULL_OR_EMPTY('')", True),
    ("NOT_NULL_OR_EMPTY(NULL)", False),
])
def test_string_functions(sql, expected):
    assert ev(sql) == expected


@pytest.mark.parametrize("sql, expected_type, expected", [
    ("LENGTH('中文')", pa.int32(), 6),          # bytes
    ("CHAR_LENGTH('中文')", pa.int32(), 2),
    ("CHARACTER_LENGTH('abc')", pa.int32(), 3),
    ("LENGTH(NULL)", pa.int32(), None),
    ("INSTR('abc', 'c')", pa.int32(), 3),
    ("ASCII('a')", pa.int32(), 97),
    ("MD5('abc')", pa.string(), hashlib.md5(b"abc").hexdigest()),
    ("STARTS_WITH('a', 'a')", pa.bool_(), True),
])
def test_string_result_types(sql, expected_type, expected):
    assert ev_typed(sql) == (expected_type, expected)


def test_string_functions_over_columns():
    assert col("CONCAT(s, i, d)") == ["abc12017-10-01", None, "中文-72020-01-31",
                                      "x,y,z22020-02-29"]
    assert col("CONCAT_WS('|', s, i)") == ["abc|1", "", "中文|-7", "x,y,z|2"]
    assert col("LENGTH(s)") == [3, None, 6, 5]
    assert col("CHAR_LENGTH(s)") == [3, None, 2, 5]
    assert col("UPPER(s)") == ["ABC", None, "中文", "X,Y,Z"]
    assert col("MD5(s)")[0] == hashlib.md5(b"abc").hexdigest()
    assert col_type("MD5(s)") == pa.string()


def test_per_row_parameters():
    # Arrow needs constant slice bounds / patterns: these run once per distinct parameter.
    assert col("SUBSTR(s, i)") == ["abc", None, "", ",y,z"]
    assert col("SUBSTR(s, 2, t)") == ["b", None, "", None]
    assert col("LEFT(s, t)") == ["a", None, "", None]
    assert col("SPLIT_PART(s, ',', t)") == ["abc", None, None, None]
    assert col("LPAD(s, t + 3, 'ab')") == ["aabc", None, "a中文", None]
    assert col("LOCATE('b', s, t)") == [2, None, 0, None]
    assert col("REPEAT(s, t)") == ["abc", None, "", None]
