"""Stream Load's two-phase commit across kill -9: a pre-committed load is journaled (as Doris
keeps it), stays invisible, keeps its label, and after the restart can still be committed (all
its rows, once) or aborted (none, files removed)."""

from __future__ import annotations

import base64
import json
import urllib.request


def _call(srv, path: str, headers: dict, data: bytes = b"") -> dict:
    auth = base64.b64encode(b"root:").decode()
    req = urllib.request.Request(f"http://{srv.host}:{srv.http_port}{path}", data=data,
                                 method="PUT", headers={"Authorization": f"Basic {auth}", **headers})
    return json.loads(urllib.request.urlopen(req, timeout=60).read())


def _rows(srv, sql: str):
    with srv.connect("tp").cursor() as cur:
        cur.execute(sql)
        return [tuple(r) for r in cur.fetchall()]


def test_precommitted_loads_survive_kill9(server_factory):
    srv = server_factory().start()
    with srv.connect().cursor() as cur:
        cur.execute("CREATE DATABASE tp")
        cur.execute("CREATE TABLE tp.t (k INT, v VARCHAR(10)) DUPLICATE KEY(k) "
                    "DISTRIBUTED BY HASH(k) BUCKETS 3 PROPERTIES ('replication_num' = '1')")
    small = b"".join(b"%d,s%d\n" % (i, i) for i in range(10))        # a load-file slice
    large = b"".join(b"%d,l%d\n" % (i, i) for i in range(100, 5100))  # segment files
    txns = {}
    for label, body in (("keep_small", small), ("keep_large", large), ("drop_me", small)):
        reply = _call(srv, "/api/tp/t/_stream_load",
                      {"label": label, "column_separator": ",", "two_phase_commit": "true"}, body)
        assert reply["Status"] == "Success", reply
        txns[label] = reply["TxnId"]
    assert _rows(srv, "SELECT count(*) FROM t") == [(0,)]

    srv.kill9()
    srv.start()
    assert _rows(srv, "SELECT count(*) FROM t") == [(0,)]  # still invisible
    again = _call(srv, "/api/tp/t/_stream_load", {"label": "keep_small", "column_separator": ","},
                  b"1,x\n")
    assert again["Status"] == "Label Already Exists" and \
        again["ExistingJobStatus"] == "PRECOMMITTED", again
    for label in ("keep_small", "keep_large"):
        assert _call(srv, "/api/tp/_stream_load_2pc",
                     {"txn_id": str(txns[label]), "txn_operation": "commit"})["status"] == "Success"
    assert _call(srv, "/api/tp/_stream_load_2pc",
                 {"label": "drop_me", "txn_operation": "abort"})["status"] == "Success"
    assert _rows(srv, "SELECT count(*), min(k), max(k) FROM t") == [(5010, 0, 5099)]

    srv.kill9()  # committed stays committed; the aborted one never appears
    srv.start()
    assert _rows(srv, "SELECT count(*) FROM t") == [(5010,)]
    reply = _call(srv, "/api/tp/_stream_load_2pc",
                  {"txn_id": str(txns["drop_me"]), "txn_operation": "commit"})
    assert reply["status"] == "Fail", reply
