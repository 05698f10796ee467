"""The INSERT ... VALUES fast path accepts literal tuples only and falls back otherwise."""

from decimal import Decimal

import pytest

from server.parser.fast_values import parse_fast_insert


def test_literal_tuples_become_columns():
    f = parse_fast_insert("insert into db1.`t` (a, `b c`) values (1, 'x\\'y'), (-2.5, NULL);")
    assert (f.db, f.table, f.columns) == ("db1", "t", ["a", "b c"])
    assert f.values == [[1, Decimal("-2.5")], ["x'y", None]]


def test_quotes_and_words():
    f = parse_fast_insert("INSERT INTO t VALUES ('it''s', 1e3, TRUE, \"a\\nb\")")
    assert f.values == [["it's"], [1000.0], [True], ["a\nb"]]


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
