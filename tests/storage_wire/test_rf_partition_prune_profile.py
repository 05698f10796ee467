"""Runtime filter partition pruning through the wire: a join whose build side holds one
partition's keys reads only that partition of the RANGE-partitioned probe table (the profile's
RowsTotal), unless SET enable_runtime_filter_partition_prune = false; the rows are the same."""

from __future__ import annotations

from test_scan_profile import _run, profiled

PER_PARTITION = 1000
SQL = ("SELECT count(*), sum(f.v) FROM f JOIN d ON f.day = d.day WHERE d.tag = 'x'")


def test_a_join_reads_only_the_partitions_its_runtime_filter_meets(server):
    conn = server.connect()
    db = "rf_partition_prune_db"
    _run(conn, f"DROP DATABASE IF EXISTS {db}")
    _run(conn, f"CREATE DATABASE {db}")
    _run(conn, f"USE {db}")
    _run(conn, """CREATE TABLE f (day INT NOT NULL, k INT NOT NULL, v INT)
                  DUPLICATE KEY(day) PARTITION BY RANGE(day) (
                  PARTITION p1 VALUES LESS THAN ('100'), PARTITION p2 VALUES LESS THAN ('200'),
                  PARTITION p3 VALUES LESS THAN ('300'), PARTITION p4 VALUES LESS THAN ('400'))
                  DISTRIBUTED BY HASH(k) BUCKETS 3 PROPERTIES ("replication_num" = "1")""")
    _run(conn, """CREATE TABLE d (day INT, tag VARCHAR(4)) DUPLICATE KEY(day)
                  DISTRIBUTED BY HASH(day) BUCKETS 1 PROPERTIES ("replication_num" = "1")""")
    rows = ", ".join(f"({i % 400}, {i}, {i % 7})" for i in range(4 * PER_PARTITION))
    _run(conn, f"INSERT INTO f VALUES {rows}")
    _run(conn, "INSERT INTO d VALUES (205, 'x'), (230, 'x'), (17, 'y'), (350, 'y')")
    _run(conn, "SET enable_profile = true")
    try:
        pruned, on = profiled(conn, SQL)
        _run(conn, "SET enable_runtime_filter_partition_prune = false")
        whole, off = profiled(conn, SQL)  # the variable is in the kept plan's key
        want = [(20, sum((i % 7) for i in range(4000) if i % 400 in (205, 230)))]
        assert [tuple(int(x) for x in r) for r in pruned] == want
        assert [tuple(int(x) for x in r) for r in whole] == want
        assert on["RowsTotal"] == PER_PARTITION + 4  # partition p3 and the dimension
        assert off["RowsTotal"] == 4 * PER_PARTITION + 4
    finally:
        _run(conn, f"DROP DATABASE IF EXISTS {db}")
        conn.close()
