"""kill -9 and a merge-on-write Unique table: the delete bitmap survives, the same.

The delete bitmap entries a load computes travel in its journaled publish entry
(storage/delete_bitmap.py), and a compaction's carried entries in its swap entry. After a
SIGKILL the restarted server must read exactly the acknowledged rows, one per key (a lost
bitmap would bring overwritten rows back), and its scans must delete the same rows by bitmap
as before the kill (EXPLAIN ANALYZE's RowsDelFiltered), with no key merging (no RowsMerged).
"""

from __future__ import annotations

import random
import re
import time

DDL = ("CREATE TABLE u (k INT NOT NULL, v BIGINT, ts INT) UNIQUE KEY(k) "
       "DISTRIBUTED BY HASH(k) BUCKETS 2 "
       "PROPERTIES ('replication_num' = '1', 'function_column.sequence_col' = 'ts')")
CONF = ("cumulative_compaction_skip_window_seconds = 0\ncumulative_compaction_min_deltas = 2\n"
        "base_compaction_num_cumulative_deltas = 1\n")


def query(conn, sql):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall() if cur.description else cur.rowcount


def scan_counters(conn) -> dict[str, int]:
    text = "\n".join(r[0] for r in query(conn, "EXPLAIN ANALYZE SELECT count(*) FROM u"))
    found = re.search(r"scan: (.*)", text)
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", found.group(1) if found else "")}


def load(conn, rng: random.Random, model: dict, i: int) -> None:
    rows = [(rng.randrange(60), rng.randrange(1000), rng.randrange(5)) for _ in range(12)]
    query(conn, "INSERT INTO u VALUES " + ", ".join(f"({k}, {v}, {t})" for k, v, t in rows))
    batch: dict = {}
    for k, v, t in rows:  # within one load: the largest ts, ties to the later row
        if k not in batch or t >= batch[k][1]:
            batch[k] = (v, t)
    for k, (v, t) in batch.items():
        if k not in model or t >= model[k][1]:
            model[k] = (v, t)


def check(conn, model: dict) -> None:
    assert sorted(query(conn, "SELECT k, v, ts FROM u")) == \
        sorted((k, v, t) for k, (v, t) in model.items())
    assert query(conn, "SELECT count(*) FROM u")[0][0] == len(model)


def test_bitmap_is_the_same_after_kill9(server_factory, tmp_path):
    conf = tmp_path / "c.conf"
    conf.write_text(CONF + "disable_auto_compaction = true\n")
    srv = server_factory(extra_args=("--config", str(conf))).start()
    conn = srv.connect()
    query(conn, "CREATE DATABASE d")
    query(conn, "USE d")
    query(conn, DDL)
    rng, model = random.Random(3), {}
    for i in range(6):
        load(conn, rng, model, i)
    query(conn, "ADMIN COMPACT TABLE u PARTITION u WHERE type = 'CUMULATIVE'")
    for i in range(3):
        load(conn, rng, model, i)
    check(conn, model)
    before = scan_counters(conn)
    assert before.get("RowsDelFiltered", 0) > 0 and "RowsMerged" not in before
    conn.close()
    srv.kill9()
    srv.start()
    conn = srv.connect("d")
    check(conn, model)
    assert scan_counters(conn) == before
    load(conn, rng, model, 99)  # and it keeps computing on top of the restored bitmap
    check(conn, model)
    conn.close()


def test_kill9_during_loads_and_background_compaction(server_factory, tmp_path):
    conf = tmp_path / "c.conf"
    conf.write_text(CONF + "generate_compaction_tasks_min_interval_ms = 5\n"
                    "cumulative_compaction_rounds_for_each_base_compaction_round = 1\n")
    srv = server_factory(extra_args=("--config", str(conf))).start()
    conn = srv.connect()
    query(conn, "CREATE DATABASE d")
    query(conn, "USE d")
    query(conn, DDL)
    rng, model = random.Random(11), {}
    for i in range(30):  # acknowledged loads while compactions run in the background
        load(conn, rng, model, i)
    time.sleep(rng.uniform(0.0, 0.3))
    srv.kill9()
    srv.start()
    conn = srv.connect("d")
    check(conn, model)
    query(conn, "ADMIN COMPACT TABLE u PARTITION u WHERE type = 'BASE'")
    check(conn, model)
    load(conn, rng, model, 100)
    check(conn, model)
    conn.close()
