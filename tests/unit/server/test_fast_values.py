"""The INSERT ... VALUES fast path accepts literal tuples only and falls back otherwise."""

from decimal import Decimal

import pytest

import pyarrow as pa

from server.parser.fast_values import parse_fast_insert


def _values(f) -> list[list]:
    return [v.to_pylist() if isinstance(v, pa.Array) else v for v in f.values]


def test_literal_tuples_become_columns():
    f = parse_fast_insert("insert into db1.`t` (a, `b c`) values (1, 'x\\'y'), (-2.5, NULL);")
    assert (f.db, f.table, f.columns) == ("db1", "t", ["a", "b c"])
    assert _values(f) == [[1, Decimal("-2.5")], ["x'y", None]]


def test_quotes_and_words():
    f = parse_fast_insert("INSERT INTO t VALUES ('it''s', 1e3, TRUE, \"a\\nb\")")
    assert _values(f) == [["it's"], [1000.0], [True], ["a\nb"]]


@pytest.mark.parametrize("sql", [
    "insert into t values (1, now())",          # an expression
    "insert into t values (1 2)",               # missing comma
    "insert into t values (1),(2); select 1",   # a second statement
    "insert into t values (1),",                # dangling comma
    "insert into t values ((1))",               # nested parentheses
    "insert into t select 1",                   # not VALUES
    "insert into t values (1) /* c */",         # a comment
    "insert into t values (1), (1, 2)",         # ragged rows: the normal path reports it
])
def test_falls_back(sql):
    assert parse_fast_insert(sql) is None


def _bulk(rows: list[str], copies: int = 400) -> str:
    """A statement long enough for the bulk way: the rows repeated."""
    return "INSERT INTO t VALUES " + ", ".join(rows * copies)


@pytest.mark.parametrize("rows", [
    ["(1, 'a', 2.50, NULL, TRUE, 1e3)", "(-2, 'b c', .5, 'x', FALSE, 2.5E-1)"],
    ["(+7, \"dq\", -0.125, NULL, NULL, NULL)", "(007, 'it''s', 3., 'NULL', true, -1e0)"],
    ["(1, 'a\\'b')", "(2.5, 'c\\nd')"],                     # escapes; int and decimal mixed
    ["(1, 'x')", "('2', NULL)"],                               # a quoted number among numbers
    ["(99999999999999999999, 'big')", "(1, 'small')"],         # beyond BIGINT
    ["(1,'a,b')", "(2,'c')"],                                  # a comma inside a string
    ["(1,'x),(y')", "(2,'z')"],                                # a row break inside a string
    ["(1,'x) , (y')", "(2,'')"],                               # ... with spaces; an empty one
    ["(1,'a\nb')", "(2,'it''s')"],                            # escapes: the general way
    ["( 1 ,  'p' )", "(-3,'q')"],                              # spaces around values
    # an integer in the first row, then something else in that column (read as int64 first)
    ["(1, 5)", "(2, NULL)"], ["(1, 5)", "(2, 2.5)"], ["(1, 5)", "(2, 'x')"],
    ["(1, 5)", "(2, +6)"], ["(1,5)", "(2,\t6)"], ["(1, 5)", "(2, 99999999999999999999)"],
    ["(1, 5)", "(2, TRUE)"], ["(1,5)", "(2,-0)"], ["(1, 5)", "(2, 1e3)"],
    ["(1, '0x1f')", "(2, 'a')"],                               # hex-looking text
])
def test_bulk_way_agrees_with_token_way(rows):
    from server.parser.fast_values import _token_columns
    sql = _bulk(rows)
    start = sql.index("VALUES") + len("VALUES ")
    assert _values(parse_fast_insert(sql)) == _token_columns(sql, start)


@pytest.mark.parametrize("sql", [
    _bulk(["(1, 2)", "(3)"]),                   # ragged
    _bulk(["(1, now())"]),                       # an expression
    _bulk(["(1, 2)"]) + "; select 1",           # a second statement
    _bulk(["(1, 2)"]) + ",",                     # dangling comma
    _bulk(["(1, 2)", "()"]),                     # an empty row
    _bulk(["(1, 2)", "(3, x)"]),                 # a bare word
    _bulk(["(1, 2)", "(0x10, 3)"]),              # a hex literal (Arrow's int parser takes it)
])
def test_bulk_way_falls_back(sql):
    assert parse_fast_insert(sql) is None
