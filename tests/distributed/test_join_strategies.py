"""Every join distribution runs the same query to the same result, and moves the bytes its
strategy implies: bucket shuffle (build side once) < broadcast (build side x instances) and
shuffle (both sides), as EXPLAIN ANALYZE reports them."""

from __future__ import annotations

import re


def _analyze(cur, sql: str) -> tuple[str, int]:
    cur.execute("EXPLAIN ANALYZE " + sql)
    text = "\n".join(r[0] for r in cur.fetchall())
    op = re.search(r"join op: INNER JOIN \((\w+)\)", text).group(1)
    moved = re.search(r"exchange bytes: (\w+)=(\d+)", text)
    return op, int(moved.group(2))


def test_strategies_agree_and_move_the_expected_bytes(server, fresh_db):
    conn = server.connect(fresh_db)
    cur = conn.cursor()
    cur.execute("CREATE TABLE f (k INT, v BIGINT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 4 "
                "PROPERTIES ('replication_num' = '1')")
    cur.execute("CREATE TABLE d (k INT, name VARCHAR(10)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) "
                "BUCKETS 2 PROPERTIES ('replication_num' = '1')")
    cur.execute("INSERT INTO f VALUES " + ", ".join(f"({i % 50}, {i})" for i in range(5000)))
    cur.execute("INSERT INTO d VALUES " + ", ".join(f"({i}, 'n{i}')" for i in range(0, 50, 2)))
    query = "SELECT d.name, count(*), sum(f.v) FROM f JOIN {hint} d ON f.k = d.k GROUP BY d.name ORDER BY d.name"
    results, moved = {}, {}
    for hint in ("", "[broadcast]", "[shuffle]"):
        sql = query.format(hint=hint)
        cur.execute(sql)
        results[hint] = cur.fetchall()
        op, nbytes = _analyze(cur, sql)
        moved[op] = nbytes
    assert results[""] == results["[broadcast]"] == results["[shuffle]"]
    assert len(results[""]) == 25
    assert set(moved) == {"BUCKET_SHUFFLE", "BROADCAST", "PARTITIONED"}
    assert 0 < moved["BUCKET_SHUFFLE"] < moved["BROADCAST"]
    assert moved["BUCKET_SHUFFLE"] < moved["PARTITIONED"]


def test_colocate_join_moves_nothing(server, fresh_db):
    conn = server.connect(fresh_db)
    cur = conn.cursor()
    for name in ("c1", "c2"):
        cur.execute(f"CREATE TABLE {name} (k INT, v BIGINT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) "
                    f"BUCKETS 4 PROPERTIES ('replication_num' = '1', 'colocate_with' = 'g_{fresh_db}')")
        cur.execute(f"INSERT INTO {name} VALUES " + ", ".join(f"({i % 40}, {i})" for i in range(2000)))
    sql = "SELECT count(*), sum(c1.v + c2.v) FROM c1 JOIN {hint} c2 ON c1.k = c2.k"
    cur.execute(sql.format(hint=""))
    colocated = cur.fetchall()
    op, moved = _analyze(cur, sql.format(hint=""))
    assert (op, moved) == ("COLOCATE", 0)
    cur.execute(sql.format(hint="[shuffle]"))
    assert cur.fetchall() == colocated
    op, moved_shuffle = _analyze(cur, sql.format(hint="[shuffle]"))
    assert op == "PARTITIONED" and moved_shuffle > 0
