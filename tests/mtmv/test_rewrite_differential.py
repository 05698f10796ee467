"""Transparent rewrite to async materialized views, differentially: every query runs with
enable_materialized_view_rewrite on and off and must give the same answer; the queries the
views can answer must be rewritten (EXPLAIN names the view as chosen), the others must not."""

from __future__ import annotations

import random
from decimal import Decimal

import pytest


def query(conn, sql):
    with conn.cursor() as cur:
        cur.execute(sql)
        return [tuple(r) for r in cur.fetchall()] if cur.description else cur.rowcount


VIEWS = [
    # an aggregate over a join, with a filter
    "CREATE MATERIALIZED VIEW mv_agg BUILD IMMEDIATE REFRESH AUTO ON MANUAL "
    "DISTRIBUTED BY RANDOM BUCKETS 2 PROPERTIES ('replication_num' = '1') AS "
    "SELECT c.region, s.kind, s.day, SUM(s.amount) AS total, COUNT(*) AS n, "
    "MIN(s.qty) AS lo, MAX(s.qty) AS hi, COUNT(s.qty) AS nq "
    "FROM sales s JOIN cust c ON s.cust = c.cust WHERE s.qty > 0 "
    "GROUP BY c.region, s.kind, s.day",
    # a plain join
    "CREATE MATERIALIZED VIEW mv_join BUILD IMMEDIATE REFRESH AUTO ON MANUAL "
    "DISTRIBUTED BY RANDOM BUCKETS 2 PROPERTIES ('replication_num' = '1') AS "
    "SELECT s.id, s.day, s.kind, s.qty, s.amount, c.region, c.name "
    "FROM sales s JOIN cust c ON s.cust = c.cust",
]

REWRITTEN = [  # (query, the view that must answer it)
    ("SELECT c.region, SUM(s.amount) FROM sales s JOIN cust c ON s.cust = c.cust "
     "WHERE s.qty > 0 GROUP BY c.region ORDER BY c.region", "mv_agg"),
    ("SELECT region, kind, COUNT(*), MIN(qty), MAX(qty), COUNT(qty) FROM sales JOIN cust "
     "ON sales.cust = cust.cust WHERE qty > 0 AND day >= 3 GROUP BY region, kind "
     "ORDER BY region, kind", "mv_agg"),
    ("SELECT COUNT(*), SUM(s.amount) FROM cust c JOIN sales s ON c.cust = s.cust "
     "WHERE 0 < s.qty AND c.region = 'nowhere'", "mv_agg"),
    ("SELECT s.kind, SUM(s.amount) AS total FROM sales s JOIN cust c ON s.cust = c.cust "
     "WHERE s.qty > 0 GROUP BY s.kind HAVING SUM(s.amount) > 10 ORDER BY total DESC LIMIT 2",
     "mv_agg"),
    # mv_agg cannot filter on s.id (not a group-by column); mv_join can
    ("SELECT c.region, SUM(s.amount) FROM sales s JOIN cust c ON s.cust = c.cust "
     "WHERE s.qty > 0 AND s.id > 3 GROUP BY c.region ORDER BY c.region", "mv_join"),
    ("SELECT s.id, c.name FROM sales s JOIN cust c ON s.cust = c.cust WHERE s.amount > 20 "
     "ORDER BY s.id", "mv_join"),
    ("SELECT c.name, AVG(s.qty), COUNT(DISTINCT s.kind) FROM sales s, cust c "
     "WHERE s.cust = c.cust GROUP BY c.name ORDER BY c.name", "mv_join"),
]

NOT_REWRITTEN = [
    # a LEFT join: not the views' inner join
    "SELECT c.region, SUM(s.amount) FROM sales s LEFT JOIN cust c ON s.cust = c.cust "
    "WHERE s.qty > 0 GROUP BY c.region ORDER BY c.region",
    # a filter on a column mv_agg does not group by and mv_join does not keep
    "SELECT c.region, SUM(s.amount) FROM sales s JOIN cust c ON s.cust = c.cust "
    "WHERE s.qty > 0 AND s.cust > 3 GROUP BY c.region ORDER BY c.region",
    # a join condition the views do not have
    "SELECT c.region, SUM(s.amount) FROM sales s JOIN cust c ON s.cust = c.cust "
    "AND s.day = c.cust WHERE s.qty > 0 GROUP BY c.region ORDER BY c.region",
    # AVG and COUNT DISTINCT over an aggregate view; the filter mv_agg has is missing for mv_join
    "SELECT c.region, COUNT(DISTINCT s.day) FROM sales s JOIN cust c ON s.cust = c.cust "
    "WHERE s.qty > 0 AND s.cust > 1 GROUP BY c.region ORDER BY c.region",
    # NATURAL JOIN: its condition is implied, not written; left to the normal plan
    "SELECT region, SUM(amount) FROM sales NATURAL JOIN cust WHERE qty > 0 GROUP BY region "
    "ORDER BY region",
    # one table only
    "SELECT kind, SUM(amount) FROM sales GROUP BY kind ORDER BY kind",
    # a column neither view keeps
    "SELECT c.region, SUM(s.cust) FROM sales s JOIN cust c ON s.cust = c.cust "
    "WHERE s.qty > 0 GROUP BY c.region ORDER BY c.region",
]


def _setup(conn, rng: random.Random) -> None:
    query(conn, "CREATE TABLE sales (id INT, day INT, cust INT, kind VARCHAR(5), qty INT, "
                "amount DECIMAL(10, 2)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 3 "
                "PROPERTIES ('replication_num' = '1')")
    query(conn, "CREATE TABLE cust (cust INT, region VARCHAR(8), name VARCHAR(8)) "
                "DUPLICATE KEY(cust) DISTRIBUTED BY HASH(cust) BUCKETS 2 "
                "PROPERTIES ('replication_num' = '1')")
    rows = []
    for i in range(1, 200):
        qty = rng.choice([None, -1, 0, 1, 2, 5, 9])
        amount = Decimal(rng.randint(0, 5000)) / 100
        rows.append(f"({i}, {rng.randint(1, 7)}, {rng.randint(1, 6)}, "
                    f"'{rng.choice('abc')}', {'NULL' if qty is None else qty}, {amount})")
    query(conn, "INSERT INTO sales VALUES " + ", ".join(rows))
    query(conn, "INSERT INTO cust VALUES (1, 'north', 'ann'), (2, 'south', 'bob'), "
                "(3, 'north', 'cid'), (4, NULL, 'dee'), (5, 'east', NULL)")
    for sql in VIEWS:
        query(conn, sql)


def _chosen(conn, sql: str) -> str | None:
    lines = [r[0] for r in query(conn, "EXPLAIN " + sql)]
    if "MaterializedViewRewriteSuccessAndChose:" not in lines:
        return None
    names = lines[lines.index("MaterializedViewRewriteSuccessAndChose:") + 1]
    return names.split("Names:")[1].strip() or None


def _both(conn, sql: str) -> tuple[list, list]:
    query(conn, "SET enable_materialized_view_rewrite = false")
    off = query(conn, sql)
    query(conn, "SET enable_materialized_view_rewrite = true")
    return off, query(conn, sql)


@pytest.mark.parametrize("seed", [1, 2])
def test_rewrite_on_and_off_agree(server, fresh_db, seed):
    conn = server.connect(fresh_db)
    _setup(conn, random.Random(seed))
    for sql, view in REWRITTEN:
        assert _chosen(conn, sql) == view, sql
        off, on = _both(conn, sql)
        assert on == off, sql
    for sql in NOT_REWRITTEN:
        assert _chosen(conn, sql) is None, sql
        off, on = _both(conn, sql)
        assert on == off, sql
    # a load makes both views stale: nothing is rewritten, answers still agree
    query(conn, "INSERT INTO sales VALUES (500, 1, 1, 'a', 3, 99.99)")
    for sql, _ in REWRITTEN:
        assert _chosen(conn, sql) is None, sql
        off, on = _both(conn, sql)
        assert on == off, sql
    query(conn, "REFRESH MATERIALIZED VIEW mv_agg AUTO")
    sql, view = REWRITTEN[0]
    assert _chosen(conn, sql) == view
    off, on = _both(conn, sql)
    assert on == off
