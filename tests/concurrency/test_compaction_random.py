"""Randomized: loads, DELETEs and compactions interleaved (background compaction forced often,
plus ADMIN COMPACT of both types at random), every query compared with a model of the data
(Aggregate SUM/MAX/REPLACE, Unique, Duplicate). Results must never change across compaction."""

from __future__ import annotations

import random
import time

import pytest

CONF = ("cumulative_compaction_skip_window_seconds = 0\ncumulative_compaction_min_deltas = 2\n"
        "base_compaction_num_cumulative_deltas = 2\ngenerate_compaction_tasks_min_interval_ms = 5\n"
        "cumulative_compaction_rounds_for_each_base_compaction_round = 1\n"
        "base_compaction_interval_seconds_since_last_operation = 0\n")
TABLES = {
    "agg": "CREATE TABLE agg (k INT NOT NULL, v BIGINT SUM DEFAULT '0', m INT MAX, r INT REPLACE) "
           "AGGREGATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 3 PROPERTIES ('replication_num' = '1')",
    "uni": "CREATE TABLE uni (k INT NOT NULL, v BIGINT, m INT, r INT) UNIQUE KEY(k) "
           "DISTRIBUTED BY HASH(k) BUCKETS 3 PROPERTIES ('replication_num' = '1')",
    "dup": "CREATE TABLE dup (k INT NOT NULL, v BIGINT, m INT, r INT) DUPLICATE KEY(k) "
           "DISTRIBUTED BY HASH(k) BUCKETS 3 PROPERTIES ('replication_num' = '1')",
}
OPS = 100


def query(conn, sql):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall() if cur.description else cur.rowcount


class Model:
    def __init__(self):
        self.agg: dict[int, tuple] = {}
        self.uni: dict[int, tuple] = {}
        self.dup: list[tuple] = []

    def load(self, rows):
        for k, v, m, r in rows:
            old = self.agg.get(k)
            self.agg[k] = (v, m, r) if old is None else (old[0] + v, max(old[1], m), r)
            self.uni[k] = (v, m, r)
            self.dup.append((k, v, m, r))

    def delete(self, test):
        self.agg = {k: x for k, x in self.agg.items() if not test(k)}
        self.uni = {k: x for k, x in self.uni.items() if not test(k)}
        self.dup = [row for row in self.dup if not test(row[0])]

    def rows(self, table):
        if table == "dup":
            return sorted(self.dup)
        return sorted((k, *x) for k, x in getattr(self, table).items())


@pytest.mark.parametrize("seed", [1, 2])
def test_results_never_change_across_compaction(server_factory, tmp_path, seed):
    conf = tmp_path / "c.conf"
    conf.write_text(CONF)
    srv = server_factory(extra_args=("--config", str(conf))).start()
    conn = srv.connect()
    query(conn, "CREATE DATABASE r")
    query(conn, "USE r")
    for ddl in TABLES.values():
        query(conn, ddl)
    rng = random.Random(seed)
    model = Model()
    for step in range(OPS):
        op = rng.random()
        if op < 0.6:
            rows = [(rng.randrange(40), rng.randrange(-5, 100), rng.randrange(100),
                     rng.randrange(1000)) for _ in range(rng.randrange(1, 12))]
            values = ", ".join(f"({k}, {v}, {m}, {r})" for k, v, m, r in rows)
            for table in TABLES:
                query(conn, f"INSERT INTO {table} VALUES {values}")
            model.load(rows)
        elif op < 0.75:
            x = rng.randrange(40)
            where, test = rng.choice([(f"k = {x}", lambda k: k == x),
                                      (f"k < {x // 4}", lambda k: k < x // 4),
                                      (f"k >= {x + 5}", lambda k: k >= x + 5)])
            for table in TABLES:
                query(conn, f"DELETE FROM {table} WHERE {where}")
            model.delete(test)
        elif op < 0.85:
            kind = rng.choice(["BASE", "CUMULATIVE"])
            table = rng.choice(list(TABLES))
            query(conn, f"ADMIN COMPACT TABLE {table} PARTITION {table} WHERE type = '{kind}'")
        for table in TABLES:
            got = sorted(query(conn, f"SELECT k, v, m, r FROM {table}"))
            assert got == model.rows(table), f"step {step}: {table} differs from the model"
        total = sum(x[0] for x in model.agg.values())
        assert query(conn, "SELECT count(*), sum(v) FROM agg") == \
            ((len(model.agg), total if model.agg else None),)
        big = sorted((k, *x) for k, x in model.agg.items() if x[0] > 100)
        assert sorted(query(conn, "SELECT k, v, m, r FROM agg WHERE v > 100")) == big
    # compaction did run and converges: with deltas merged as soon as two exist, background
    # compaction brings every tablet down to a few rowsets spanning all its versions
    deadline = time.monotonic() + 60
    while True:
        spans = [(int(r[4]), int(r[15])) for r in query(conn, "SHOW TABLETS FROM agg")]
        if all(rowsets <= 8 for _, rowsets in spans) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert all(rowsets <= 8 < version for version, rowsets in spans), spans
    for table in TABLES:
        assert sorted(query(conn, f"SELECT k, v, m, r FROM {table}")) == model.rows(table)
    conn.close()
