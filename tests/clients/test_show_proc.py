"""SHOW PROC's tree walked from `/` as an operator does it: each level's ids lead to the next
(databases, tables, partitions, indexes, tablets, index schemas), with Doris's column names
and errors."""

from __future__ import annotations

import pymysql
import pytest


def _proc(conn, path: str) -> tuple[list[str], list[tuple]]:
    with conn.cursor() as cur:
        cur.execute(f"SHOW PROC '{path}'")
        return [d[0] for d in cur.description], [tuple(r) for r in cur.fetchall()]


def test_walk_the_tree(server, fresh_db):
    conn = server.connect(fresh_db)
    with conn.cursor() as cur:
        cur.execute("""CREATE TABLE a (k INT, g INT, v INT SUM) AGGREGATE KEY(k, g)
            PARTITION BY RANGE(k) (PARTITION p1 VALUES LESS THAN (10),
            PARTITION p2 VALUES LESS THAN (20)) DISTRIBUTED BY HASH(k) BUCKETS 2
            ROLLUP (r1 (g, v)) PROPERTIES ("replication_num" = "1")""")
        cur.execute("INSERT INTO a VALUES (1, 1, 1), (11, 2, 2)")
    names, rows = _proc(conn, "/")
    assert names == ["name"] and ("dbs",) in rows and ("statistic",) in rows
    names, rows = _proc(conn, "/dbs")
    assert names[:3] == ["DbId", "DbName", "TableNum"]
    db_id = next(r[0] for r in rows if r[1] == fresh_db)
    names, rows = _proc(conn, f"/dbs/{db_id}")
    assert names[:5] == ["TableId", "TableName", "IndexNum", "PartitionColumnName",
                         "PartitionNum"]
    assert [r[1:5] for r in rows] == [("a", "2", "k", "2")]
    table_id = rows[0][0]
    assert _proc(conn, f"/dbs/{db_id}/{table_id}")[1] == [("partitions",), ("temp_partitions",),
                                                         ("index_schema",)]
    names, rows = _proc(conn, f"/dbs/{db_id}/{table_id}/partitions")
    assert names[:2] == ["PartitionId", "PartitionName"] and [r[1] for r in rows] == ["p1", "p2"]
    partition_id = rows[0][0]
    names, rows = _proc(conn, f"/dbs/{db_id}/{table_id}/partitions/{partition_id}")
    assert names == ["IndexId", "IndexName", "State", "LastConsistencyCheckTime"]
    assert [r[1] for r in rows] == ["a", "r1"]
    rollup_id = rows[1][0]
    names, rows = _proc(conn, f"/dbs/{db_id}/{table_id}/partitions/{partition_id}/{rollup_id}")
    assert names[:3] == ["TabletId", "ReplicaId", "BackendId"] and len(rows) == 2
    assert sum(int(r[names.index("RowCount")]) for r in rows) == 1  # p1 holds one row
    names, rows = _proc(conn, f"/dbs/{db_id}/{table_id}/index_schema")
    assert [r[1] for r in rows] == ["a", "r1"] and rows[1][-1] == "AGG_KEYS(g)"
    names, rows = _proc(conn, f"/dbs/{db_id}/{table_id}/index_schema/{rollup_id}")
    assert names == ["Field", "Type", "Null", "Key", "Default", "Extra"]
    assert [(r[0], r[3], r[5]) for r in rows] == [("g", "true", ""), ("v", "false", "SUM")]
    names, rows = _proc(conn, "/current_queries")  # this very statement is running
    assert names[:3] == ["QueryId", "ConnectionId", "Catalog"]
    assert any("current_queries" in r[-1] for r in rows), rows
    names, rows = _proc(conn, "/statistic")
    assert names[0] == "DbId" and rows[-1][0] == "Total"
    for path, message in (("/dbs/99999999", "Database 99999999 does not exist"),
                          ("/dbs/x", "Invalid db id format: x"),
                          ("/nope", "Proc path '/nope' doesn't exist")):
        with pytest.raises(pymysql.MySQLError, match=message):
            _proc(conn, path)
    conn.close()


def test_show_frontends_names_the_ports_this_server_listens_on(server):
    """A tool that connects to the FE listed by SHOW FRONTENDS must reach this server: its
    QueryPort and HttpPort are the ones given at start-up, not Doris's defaults."""
    with server.connect().cursor() as cur:
        cur.execute("SHOW FRONTENDS")
        names = [d[0] for d in cur.description]
        row = dict(zip(names, cur.fetchone()))
    assert (int(row["QueryPort"]), int(row["HttpPort"])) == (server.port, server.http_port)
    assert row["IsMaster"] == "true" and row["Alive"] == "true"
