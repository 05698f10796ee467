"""mem_limit: loads and queries fail with Doris's MEM_LIMIT_EXCEEDED instead of the process dying.

Two servers at small scale (a few seconds each):
- `mem_limit = 64M`, below what the process already holds: a Stream Load and an INSERT fail
  with `[MEM_LIMIT_EXCEEDED]process memory used ... exceed limit 64.00 MB ...`, nothing is
  loaded, and the server keeps answering queries;
- `mem_limit = 768M` (memtables flushed past 307 MB): a Stream Load of ~100 MB of CSV
  (about three times the memtable budget once converted) loads whole, and the server's peak
  resident set stays under mem_limit;
- `mem_limit = 400M`: 3M rows load in six Stream Loads, then an aggregation whose input grows
  past the budget fails with MEM_LIMIT_EXCEEDED while small queries and loads go on.
"""

from __future__ import annotations

import base64
import http.client
import json
from pathlib import Path

import pymysql
import pytest

AUTH = {"Authorization": "Basic " + base64.b64encode(b"root:").decode()}
DDL = """CREATE TABLE t (k BIGINT NOT NULL, v INT, s VARCHAR(32)) DUPLICATE KEY(k)
DISTRIBUTED BY HASH(k) BUCKETS 8 PROPERTIES ("replication_num" = "1")"""


def _server(server_factory, tmp_path, mem_limit: str):
    conf = tmp_path / f"mem_{mem_limit}.conf"
    conf.write_text(f"mem_limit = {mem_limit}\n")
    srv = server_factory(f"data_{mem_limit}", extra_args=("--config", str(conf))).start()
    conn = srv.connect()
    with conn.cursor() as cur:
        cur.execute("CREATE DATABASE m")
        cur.execute("USE m")
        cur.execute(DDL)
    conn.close()
    return srv


def _stream_load(srv, body, length: int, label: str) -> dict:
    conn = http.client.HTTPConnection("127.0.0.1", srv.http_port, timeout=120, blocksize=1 << 20)
    conn.request("PUT", "/api/m/t/_stream_load", body=body,
                 headers={**AUTH, "label": label, "Content-Length": str(length)})
    reply = json.loads(conn.getresponse().read())
    conn.close()
    return reply


def _count(srv) -> int:
    conn = srv.connect("m")
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT count(*) FROM t")
            return cur.fetchone()[0]
    finally:
        conn.close()


def _peak_rss(srv) -> int:
    for line in Path(f"/proc/{srv.proc.pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def test_loads_over_mem_limit_fail_and_the_server_keeps_serving(server_factory, tmp_path):
    srv = _server(server_factory, tmp_path, "64M")
    body = b"".join(b"%d\t%d\tx\n" % (i, i) for i in range(1000))
    reply = _stream_load(srv, body, len(body), "over")
    assert reply["Status"] == "Fail"
    assert reply["Message"].startswith("[MEM_LIMIT_EXCEEDED]process memory used ")
    assert " exceed limit 64.00 MB or sys available memory " in reply["Message"]
    conn = srv.connect("m")
    with conn.cursor() as cur:
        with pytest.raises(pymysql.err.OperationalError) as err:
            cur.execute("INSERT INTO t VALUES (1, 1, 'a'), (2, 2, 'b')")
        assert "errCode = 2, detailMessage = [MEM_LIMIT_EXCEEDED]process memory used " in \
            err.value.args[1]
        cur.execute("SELECT 1 + 1")
        assert cur.fetchone() == (2,)
    conn.close()
    assert _count(srv) == 0
    assert not list((srv.data_dir).rglob("*.dat"))  # the failed loads left no segment


def test_a_load_larger_than_its_memory_budget_completes(server_factory, tmp_path):
    srv = _server(server_factory, tmp_path, "768M")
    rows = 4_500_000
    path = tmp_path / "body.csv"
    with open(path, "wb") as f:
        for start in range(0, rows, 500_000):
            f.write(b"".join(b"%d\t%d\tsome_text_%d\n" % (i, i % 1000, i % 97)
                             for i in range(start, start + 500_000)))
    size = path.stat().st_size
    assert size > 100_000_000
    with open(path, "rb") as body:
        reply = _stream_load(srv, body, size, "big")
    assert reply["Status"] == "Success", reply
    assert reply["NumberLoadedRows"] == rows
    assert _count(srv) == rows
    assert _peak_rss(srv) < 768 << 20


def test_a_query_over_mem_limit_fails_and_the_server_keeps_serving(server_factory, tmp_path):
    """A query whose materialised input grows past mem_limit fails with Doris's
    MEM_LIMIT_EXCEEDED (after the page cache is dropped); smaller queries and loads go on."""
    srv = _server(server_factory, tmp_path, "400M")
    for part in range(6):  # 3M rows in loads that each fit the budget
        body = b"".join(b"%d\t%d\tsome_longer_text_%d\n" % (i, i % 1000, i)
                        for i in range(part * 500_000, (part + 1) * 500_000))
        reply = _stream_load(srv, body, len(body), f"part{part}")
        assert reply["Status"] == "Success", reply
    conn = srv.connect("m")
    with conn.cursor() as cur:
        cur.execute("SET exec_mem_limit = 68719476736")  # only the process budget applies
        with pytest.raises(pymysql.err.OperationalError) as err:
            # (a key of 3M strings of ~110 bytes: ~330 MB of input to group, whatever the
            # allocator returns in time)
            cur.execute("SELECT s, k, v, concat(s, s, s, s, s) AS s5, count(*) FROM t "
                        "GROUP BY s, k, v, concat(s, s, s, s, s) ORDER BY s DESC, k LIMIT 3")
        assert "[MEM_LIMIT_EXCEEDED]process memory used " in err.value.args[1]
        assert " exceed limit 400.00 MB " in err.value.args[1]
        cur.execute("SELECT count(*), sum(v) FROM t WHERE k < 1000")
        assert cur.fetchone() == (1000, sum(range(1000)))
    conn.close()
    body = b"7000000\t1\tafter\n"
    reply = _stream_load(srv, body, len(body), "after")
    assert reply["Status"] == "Success", reply
    assert _count(srv) == 3_000_001
    assert srv.running
