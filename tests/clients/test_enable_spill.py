"""enable_spill (Doris's session variable, default false): a large GROUP BY, a large join and a
large ORDER BY that fail with MEM_LIMIT_EXCEEDED in memory complete when they may spill, with
the right results, and leave no spill file behind (also when KILLed while spilling).

One server with mem_limit 512M (about 180 MB of it the idle server's own), 1M rows in two Stream Loads (a few seconds); the session's
exec_mem_limit is 16 MB, so that every query's whole input is over its budget while each
spilled partition is well under it (the process budget applies as well).
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pymysql
import pytest

from tests.clients.test_mem_limit import _server, _stream_load

ROWS = 1_000_000
LIMIT = "SET exec_mem_limit = 16777216"  # 16 MB


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    from tests.server_process import ServerProcess
    tmp = tmp_path_factory.mktemp("spill")
    made = []

    def factory(name, **kwargs):
        made.append(ServerProcess(tmp / name, log_path=tmp / f"{name}.log", **kwargs))
        return made[-1]
    server = _server(factory, tmp, "512M")
    step = ROWS // 2
    for part in range(2):
        body = b"".join(b"%d\t%d\tsome_longer_text_%d\n" % (i, i % 1000, i)
                        for i in range(part * step, (part + 1) * step))
        assert _stream_load(server, body, len(body), f"p{part}")["Status"] == "Success"
    yield server
    for s in made:
        s.stop()


def _spill_entries(server) -> list:
    return [p for d in server.data_dir.rglob("spill") if d.is_dir() for p in d.rglob("*")]


def _both_ways(server, sql: str):
    """The query fails over exec_mem_limit in memory; with enable_spill it returns rows."""
    conn = server.connect("m")
    try:
        with conn.cursor() as cur:
            cur.execute(LIMIT)
            with pytest.raises(pymysql.err.OperationalError) as err:
                cur.execute(sql)
            assert "[MEM_LIMIT_EXCEEDED]" in err.value.args[1]
            cur.execute("SET enable_spill = true")
            cur.execute(sql)
            rows = cur.fetchall()
    finally:
        conn.close()
    assert _spill_entries(server) == []
    return rows


K = np.arange(ROWS, dtype=np.int64)
V = K % 1000


def test_large_group_by_spills(srv):
    rows = _both_ways(srv, "SELECT count(*), sum(c), sum(sv), sum(g), max(mx) FROM ("
                           "SELECT k DIV 2 AS g, count(*) AS c, sum(v) AS sv, max(s) AS mx "
                           "FROM t GROUP BY k DIV 2) x")
    assert rows == ((ROWS // 2, ROWS, int(V.sum()), int(np.unique(K // 2).sum()),
                     "some_longer_text_999999"),)
    top = _both_ways(srv, "SELECT k DIV 3 AS g, count(*), sum(v), min(s) FROM t "
                          "GROUP BY k DIV 3 ORDER BY g DESC LIMIT 2")
    last = (ROWS - 1) // 3
    want = []
    for g in (last, last - 1):
        ks = [k for k in range(3 * g, 3 * g + 3) if k < ROWS]
        want.append((g, len(ks), sum(k % 1000 for k in ks),
                     min(f"some_longer_text_{k}" for k in ks)))
    assert [tuple(int(x) if not isinstance(x, str) else x for x in r) for r in top] == want


def test_large_join_spills(srv):
    rows = _both_ways(srv, "SELECT count(*), sum(length(b.s)), max(a.s), sum(a.v * b.v) "
                           "FROM t a JOIN t b ON a.k = b.k")
    lengths = sum(len(f"some_longer_text_{i}") for i in range(ROWS))
    assert rows == ((ROWS, lengths, "some_longer_text_999999", int((V * V).sum())),)
    outer = _both_ways(srv, "SELECT count(*), count(b.k2), sum(b.v), max(a.s) FROM t a LEFT JOIN "
                            "(SELECT k + 500000 AS k2, v FROM t) b ON a.k = b.k2")
    assert outer == ((ROWS, ROWS - 500_000, int(V[:ROWS - 500_000].sum()),
                     "some_longer_text_999999"),)


def test_large_order_by_spills(srv):
    rows = _both_ways(srv, "SELECT k, s FROM t ORDER BY s DESC, k LIMIT 3 OFFSET 999990")
    names = sorted((f"some_longer_text_{i}" for i in range(ROWS)), reverse=True)
    assert [r[1] for r in rows] == names[999990:999993]
    assert all(r[1] == f"some_longer_text_{r[0]}" for r in rows)


def test_killed_spilling_query_leaves_no_file(srv):
    conn = srv.connect("m")
    killer = srv.connect("m")
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT CONNECTION_ID()")
            conn_id = cur.fetchone()[0]
            cur.execute(LIMIT)
            cur.execute("SET enable_spill = true")
        errors = []

        def run():
            try:
                with conn.cursor() as cur:
                    cur.execute("SELECT count(*), max(a.s) FROM t a JOIN t b ON a.k = b.k")
            except pymysql.err.OperationalError as exc:
                errors.append(exc.args)
        worker = threading.Thread(target=run)
        worker.start()
        deadline = time.time() + 30
        while not _spill_entries(srv) and time.time() < deadline and worker.is_alive():
            time.sleep(0.005)
        assert _spill_entries(srv), "the join did not spill"
        with killer.cursor() as cur:
            cur.execute(f"KILL QUERY {conn_id}")
        worker.join(60)
        assert errors and errors[0][0] == 1317
        deadline = time.time() + 5
        while _spill_entries(srv) and time.time() < deadline:
            time.sleep(0.05)
        assert _spill_entries(srv) == []
    finally:
        conn.close()
        killer.close()
