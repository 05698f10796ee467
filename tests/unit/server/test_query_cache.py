"""server/parser/query_cache.py: a cached tree (by text, or by a template with other number
literals) equals what parsing the text gives, and is a private copy."""

from __future__ import annotations

import pytest

from server.parser import query_cache
from server.parser.statement import parse_statement, split_statements

TEMPLATES = [
    "SELECT * FROM customer WHERE c_custkey = {}",
    "select a, 1 from t where b > {} limit 3",
    "select cast(x as decimal(10, {})) from t",
    "select {} + 2, a from t group by 1 order by 2",
    "select * from t where x in (1, {}, 3) and y = 'z{}z'",
    "select * from t where d > date_sub('2020-01-01', interval {} day)",
    "select /*+ SET_VAR(parallel_fragment_exec_instance_num = {}) */ k from t",
]
NUMBERS = ["777", "778", "1.5", "1e3", "0", "99999999999999999999", "12"]


def _parse(sql: str):
    (text, tokens), = split_statements(sql)
    return text, tokens, parse_statement(text, tokens)


def _cached(sql: str):
    found = query_cache.cached(sql)
    if found is None:
        (_, tokens), = split_statements(sql)
        found = query_cache.lookup(tokens)
    return found


@pytest.mark.parametrize("template", TEMPLATES)
def test_cached_trees_equal_a_fresh_parse(template):
    for n in NUMBERS:
        sql = template.replace("{}", n)
        text, tokens, parsed = _parse(sql)
        hit = _cached(sql)
        if hit is None:
            query_cache.remember(sql, text, tokens, parsed)
        else:
            assert hit == parsed and hit.sql("doris") == parsed.sql("doris"), sql
        assert _cached(sql) == _parse(sql)[2]  # remembered by its text now


def test_copies_are_private():
    sql = "SELECT a FROM t WHERE b = 5"
    text, tokens, parsed = _parse(sql)
    query_cache.remember(sql, text, tokens, parsed)
    first = query_cache.cached(sql)
    first.set("where", None)
    assert query_cache.cached(sql).sql() == "SELECT a FROM t WHERE b = 5"
    other = query_cache.lookup(split_statements("SELECT a FROM t WHERE b = 6")[0][1])
    assert other is not None and other.sql() == "SELECT a FROM t WHERE b = 6"


def test_only_queries_are_kept():
    sql = "INSERT INTO t VALUES (1)"
    text, tokens, parsed = _parse(sql)
    query_cache.remember(sql, text, tokens, parsed)
    assert query_cache.cached(sql) is None
