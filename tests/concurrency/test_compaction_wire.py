"""Compaction through the wire: ADMIN COMPACT and the BE HTTP API, base compaction purging
DELETEs, snapshots held by a running query (and freed when its client disconnects)."""

from __future__ import annotations

import json
import struct
import time
import urllib.request

import pymysql
import pytest

CONF = ("disable_auto_compaction = true\ncumulative_compaction_skip_window_seconds = 0\n"
        "cumulative_compaction_min_deltas = 2\nbase_compaction_num_cumulative_deltas = 2\n")


@pytest.fixture
def srv(server_factory, tmp_path):
    conf = tmp_path / "c.conf"
    conf.write_text(CONF)
    return server_factory(extra_args=("--config", str(conf))).start()


def query(conn, sql):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall() if cur.description else cur.rowcount


def http(srv, path: str, method: str = "GET") -> dict:
    req = urllib.request.Request(f"http://{srv.host}:{srv.http_port}{path}", method=method,
                                 headers={"Authorization": "Basic cm9vdDo="})  # root, no password
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


def test_base_compaction_purges_deletes_and_the_http_api_shows_it(srv):
    conn = srv.connect()
    query(conn, "CREATE DATABASE w")
    query(conn, "USE w")
    query(conn, "CREATE TABLE d (k INT NOT NULL, v INT) DUPLICATE KEY(k) DISTRIBUTED BY "
                "HASH(k) BUCKETS 1 PROPERTIES ('replication_num' = '1')")
    for i in range(3):
        query(conn, f"INSERT INTO d VALUES (1, {i}), (2, {i})")
    query(conn, "DELETE FROM d WHERE k = 1")
    query(conn, "INSERT INTO d VALUES (1, 10), (3, 10)")
    query(conn, "INSERT INTO d VALUES (1, 11), (3, 11)")
    expected = sorted(query(conn, "SELECT k, v FROM d"))
    tid = int(query(conn, "SHOW TABLETS FROM d")[0][0])
    url = query(conn, "SHOW TABLETS FROM d")[0][20]
    assert url.endswith(f":{srv.http_port}/api/compaction/show?tablet_id={tid}")
    show = http(srv, f"/api/compaction/show?tablet_id={tid}")
    assert show["cumulative policy type"] == "SIZE_BASED" and show["cumulative point"] == -1
    assert [r.split()[0] for r in show["rowsets"]] == ["[2-2]", "[3-3]", "[4-4]", "[5-5]",
                                                       "[6-6]", "[7-7]"]
    assert show["rowsets"][3].startswith("[5-5] 0 DELETE NONOVERLAPPING")

    # cumulative: the runs on either side of the delete version, never across it
    query(conn, "ADMIN COMPACT TABLE d PARTITION d WHERE type = 'CUMULATIVE'")
    query(conn, "ADMIN COMPACT TABLE d PARTITION d WHERE type = 'CUMULATIVE'")
    show = http(srv, f"/api/compaction/show?tablet_id={tid}")
    assert [r.split()[0] for r in show["rowsets"]] == ["[2-4]", "[5-5]", "[6-7]"]
    assert show["cumulative point"] == 8 and show["stale_rowsets"] == []
    versions = query(conn, "SELECT START_VERSION, END_VERSION, ROWSET_NUM_ROWS FROM "
                           f"information_schema.rowsets WHERE TABLET_ID = {tid} ORDER BY 1")
    assert versions == ((2, 4, 6), (5, 5, 0), (6, 7, 4))
    assert sorted(query(conn, "SELECT k, v FROM d")) == expected

    # base: everything before the cumulative point, the DELETE applied and purged
    reply = http(srv, f"/api/compaction/run?tablet_id={tid}&compact_type=base", "POST")
    assert reply == {"status": "Success", "msg": "compaction task is successfully triggered."}
    deadline = time.monotonic() + 20
    while http(srv, f"/api/compaction/run_status?tablet_id={tid}")["run_status"]:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    show = http(srv, f"/api/compaction/show?tablet_id={tid}")
    assert len(show["rowsets"]) == 1 and show["rowsets"][0].startswith("[0-7] 1 DATA")
    assert show["last base success time"] > "1970-01-02"
    assert sorted(query(conn, "SELECT k, v FROM d")) == expected
    assert int(query(conn, "SHOW TABLETS FROM d")[0][10]) == len(expected)  # RowCount: purged
    assert http(srv, "/api/compaction/run_status") == {"CumulativeCompaction": {},
                                                       "BaseCompaction": {}}
    # errors, as Doris's BE
    assert http(srv, "/api/compaction/show?tablet_id=1") == {"status": "Fail",
                                                             "msg": "Tablet not found"}
    assert http(srv, f"/api/compaction/run?tablet_id={tid}&compact_type=base", "POST") == \
        {"status": "Fail", "msg": "fail to execute compaction, error = -2000"}
    assert http(srv, f"/api/compaction/run?tablet_id={tid}&compact_type=full",
                "POST")["status"] == "Fail"
    conn.close()


def test_max_tablet_version_num(server_factory, tmp_path):
    conf = tmp_path / "c.conf"
    conf.write_text(CONF + "max_tablet_version_num = 3\n")
    srv = server_factory(extra_args=("--config", str(conf))).start()
    conn = srv.connect()
    query(conn, "CREATE DATABASE v")
    query(conn, "USE v")
    query(conn, "CREATE TABLE t (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
                "PROPERTIES ('replication_num' = '1')")
    for i in range(4):
        query(conn, f"INSERT INTO t VALUES ({i})")
    tid = query(conn, "SHOW TABLETS FROM t")[0][0]
    with pytest.raises(pymysql.MySQLError) as err:
        query(conn, "INSERT INTO t VALUES (9)")
    assert err.value.args == (1105, f"errCode = 2, detailMessage = [E-235]failed to init delta "
                                    f"writer. version count: 4, exceed limit: 3, tablet: {tid}")
    with pytest.raises(pymysql.MySQLError, match="E-235.*failed to push data"):
        query(conn, "DELETE FROM t WHERE k = 1")
    assert query(conn, "SELECT count(*) FROM t") == ((4,),)  # the failed load changed nothing
    query(conn, "ADMIN COMPACT TABLE t PARTITION t WHERE type = 'CUMULATIVE'")
    query(conn, "INSERT INTO t VALUES (9)")  # compaction brought the count down
    assert query(conn, "SELECT count(*) FROM t") == ((5,),)
    conn.close()


def _start_query(srv, sql: str, db: str):
    """A raw client that sends a query and reads only the first bytes of its result; returns
    the connection (kept referenced: it closes its socket when collected) and the socket."""
    conn = srv.connect(db)
    sock = conn._sock  # pymysql's socket, after the handshake
    payload = b"\x03" + sql.encode()
    sock.sendall(struct.pack("<I", len(payload))[:3] + b"\x00" + payload)
    sock.recv(4096)
    return conn, sock


def test_a_running_query_holds_its_rowsets_until_its_client_disconnects(srv):
    conn = srv.connect()
    query(conn, "CREATE DATABASE h")
    query(conn, "USE h")
    query(conn, "CREATE TABLE big (k INT NOT NULL, s VARCHAR(200)) DUPLICATE KEY(k) "
                "DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES ('replication_num' = '1')")
    pad = "x" * 150
    for batch in range(4):  # four rowsets, ~200k rows: the result outgrows socket buffers
        rows = ", ".join(f"({batch * 50000 + i}, '{pad}')" for i in range(50000))
        query(conn, f"INSERT INTO big VALUES {rows}")
    tid = int(query(conn, "SHOW TABLETS FROM big")[0][0])
    client, sock = _start_query(srv, "SELECT k, s FROM big", "h")
    query(conn, "ADMIN COMPACT TABLE big PARTITION big WHERE type = 'CUMULATIVE'")
    show = http(srv, f"/api/compaction/show?tablet_id={tid}")
    assert [r.split()[0] for r in show["rowsets"]] == ["[2-5]"]
    assert len(show["stale_rowsets"]) == 4  # the query still reads them
    sock.close()  # the client goes away mid-result
    del client
    deadline = time.monotonic() + 20
    while http(srv, f"/api/compaction/show?tablet_id={tid}")["stale_rowsets"]:
        assert time.monotonic() < deadline, "the dropped query still holds its snapshot"
        time.sleep(0.1)
    assert query(conn, "SELECT count(*) FROM big") == ((200000,),)
    conn.close()
