"""Group commit through the wire: Doris's replies, and `kill -9` keeps acknowledged async loads.

async_mode acknowledges a load once its rows are in the write-ahead log, before the group is
published: a crash then must lose none of them (the WAL is replayed at start) and load none
twice (a group published just before the crash is recognised by its label).
"""

from __future__ import annotations

import base64
import json
import re
import threading
import time
import urllib.request

import pymysql

DDL = """
CREATE TABLE ev (k INT NOT NULL, batch INT NOT NULL, note VARCHAR(20))
DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 3
PROPERTIES ("replication_num" = "1", "group_commit_interval_ms" = "{interval}")
"""
LABEL = re.compile(r"\{'label':'(group_commit_[0-9a-f]{16}_[0-9a-f]{16})', "
                   r"'status':'PREPARE', 'txnId':'(\d+)'\}")


def query(conn, sql):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall() if cur.description else cur.rowcount


def info(conn) -> tuple[str, int]:
    """(label, txn id) of the last statement's OK packet."""
    m = LABEL.search(conn._result.message.decode())
    assert m, conn._result.message
    return m.group(1), int(m.group(2))


def setup(srv, interval_ms: int):
    conn = srv.connect()
    query(conn, "CREATE DATABASE gc_db")
    query(conn, "USE gc_db")
    query(conn, DDL.format(interval=interval_ms))
    return conn


def test_async_replies_share_the_group_label_and_survive_kill9(server_factory):
    srv = server_factory().start()
    conn = setup(srv, 600_000)  # the group would commit in 10 minutes: only the WAL has it
    query(conn, "SET group_commit = async_mode")
    assert query(conn, "INSERT INTO ev VALUES (1, 1, 'a'), (2, 1, 'b')") == 2
    first = info(conn)
    assert query(conn, "INSERT INTO ev (k, batch) VALUES (3, 2)") == 1
    assert info(conn) == first  # one group: one label, one transaction
    assert query(conn, "SELECT count(*) FROM ev")[0][0] == 0  # not published yet
    conn.close()

    srv.kill9()
    srv.start()
    conn = srv.connect("gc_db")
    assert query(conn, "SELECT k, batch, note FROM ev ORDER BY k") == \
        ((1, 1, "a"), (2, 1, "b"), (3, 2, None))
    # The replay published the group under its own label: a label is taken once.
    try:
        query(conn, f"INSERT INTO ev WITH LABEL {first[0]} VALUES (9, 9, 'x')")
        raise AssertionError("the group's label was not taken")
    except pymysql.err.OperationalError as e:
        assert "has already been used" in str(e)
    conn.close()
    srv.kill9()  # and a second start replays nothing twice
    srv.start()
    conn = srv.connect("gc_db")
    assert query(conn, "SELECT count(*) FROM ev")[0][0] == 3
    conn.close()


def test_sync_mode_and_stream_load_replies(server_factory):
    srv = server_factory().start()
    conn = setup(srv, 100)
    query(conn, "SET group_commit = sync_mode")
    assert query(conn, "INSERT INTO ev VALUES (1, 1, 'a')") == 1
    label, txn = info(conn)
    assert query(conn, "SELECT count(*) FROM ev")[0][0] == 1  # visible on return
    conn.close()
    req = urllib.request.Request(
        f"http://{srv.host}:{srv.http_port}/api/gc_db/ev/_stream_load", data=b"7,7,x\n8,7,y\n",
        method="PUT", headers={"Authorization": "Basic " + base64.b64encode(b"root:").decode(),
                               "column_separator": ",", "group_commit": "sync_mode"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        reply = json.loads(resp.read())
    assert reply["Status"] == "Success" and reply["GroupCommit"] is True
    assert reply["Label"].startswith("group_commit_") and reply["Label"] != label
    assert reply["TxnId"] > txn and reply["NumberLoadedRows"] == 2
    conn = srv.connect("gc_db")
    assert query(conn, "SELECT count(*) FROM ev WHERE batch = 7")[0][0] == 2
    conn.close()


def test_kill9_during_a_stream_of_async_inserts(server_factory):
    """Every acknowledged async batch is there after kill -9, exactly once; only the batch in
    flight may or may not be."""
    srv = server_factory().start()
    setup(srv, 300).close()  # groups commit while the writer runs: WAL, publish and deletion race
    rows_per_batch = 4
    acknowledged: list[int] = []
    attempted: list[int] = []
    stop = threading.Event()

    def writer():
        c = srv.connect("gc_db")
        try:
            query(c, "SET group_commit = async_mode")
            for batch in range(10_000):
                if stop.is_set():
                    return
                values = ", ".join(f"({batch * rows_per_batch + i}, {batch}, 'b{batch}')"
                                   for i in range(rows_per_batch))
                attempted.append(batch)
                query(c, f"INSERT INTO ev VALUES {values}")
                acknowledged.append(batch)
        except pymysql.err.MySQLError:
            return

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    deadline = time.monotonic() + 30
    while len(acknowledged) < 60 and t.is_alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(acknowledged) >= 60, f"only {len(acknowledged)} batches acknowledged in 30 s"
    srv.kill9()
    stop.set()
    t.join(timeout=30)
    assert not t.is_alive()

    srv.start()
    conn = srv.connect("gc_db")
    counts = dict(query(conn, "SELECT batch, count(*) FROM ev GROUP BY batch"))
    missing = [b for b in acknowledged if counts.get(b) != rows_per_batch]
    assert not missing, f"acknowledged async batches lost, partial or doubled: {missing[:10]}"
    extra = set(counts) - set(acknowledged)
    assert extra <= set(attempted) - set(acknowledged)
    assert all(counts[b] == rows_per_batch for b in extra)
    conn.close()
