"""SHOW CREATE TABLE round-trips: its output, run again under the same name, creates a table
whose SHOW CREATE TABLE is the same text (Doris's promise; BI and migration tools rely on it)."""

from __future__ import annotations

import pytest

TABLES = {
    "dup_range": """CREATE TABLE dup_range (
        d DATE NOT NULL, k INT NOT NULL DEFAULT "7", s VARCHAR(20) COMMENT 'a name',
        v DECIMAL(12, 3), t DATETIME DEFAULT CURRENT_TIMESTAMP)
        DUPLICATE KEY(d, k) COMMENT 'facts'
        PARTITION BY RANGE(d) (PARTITION p1 VALUES LESS THAN ('2024-02-01'),
                               PARTITION p2 VALUES [('2024-02-01'), ('2024-03-01')))
        DISTRIBUTED BY HASH(k) BUCKETS 3
        PROPERTIES ("replication_num" = "1", "bloom_filter_columns" = "s")""",
    "agg_list": """CREATE TABLE agg_list (
        city VARCHAR(10) NOT NULL, k INT NOT NULL, c BIGINT SUM DEFAULT "0", m INT MAX,
        r VARCHAR(5) REPLACE, n INT REPLACE_IF_NOT_NULL NULL)
        AGGREGATE KEY(city, k)
        PARTITION BY LIST(city) (PARTITION pb VALUES IN ('bj', 'sh'), PARTITION pg VALUES IN ('gz'))
        DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ("replication_num" = "1")""",
    "uniq_mow": """CREATE TABLE uniq_mow (k BIGINT NOT NULL, v VARCHAR(8), w DOUBLE)
        UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES ("replication_num" = "1")""",
    "uniq_mor": """CREATE TABLE uniq_mor (k INT NOT NULL, v INT, INDEX idx_v (v) USING BITMAP)
        UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1
        PROPERTIES ("replication_num" = "1", "enable_unique_key_merge_on_write" = "false")""",
    "implicit_keys": """CREATE TABLE implicit_keys (a INT, b VARCHAR(4), c INT)
        DISTRIBUTED BY RANDOM BUCKETS 2 PROPERTIES ("replication_num" = "1")""",
}


def _show(cur, name: str) -> str:
    cur.execute(f"SHOW CREATE TABLE `{name}`")
    return cur.fetchall()[0][1]


@pytest.mark.parametrize("name", sorted(TABLES))
def test_show_create_table_round_trips(server, fresh_db, name):
    conn = server.connect(fresh_db)
    try:
        with conn.cursor() as cur:
            cur.execute(TABLES[name])
            first = _show(cur, name)
            cur.execute(f"DROP TABLE `{name}`")
            cur.execute(first)
            assert _show(cur, name) == first
    finally:
        conn.close()
