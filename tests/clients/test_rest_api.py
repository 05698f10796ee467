"""Doris FE's REST endpoints on the HTTP port, as scripts and tools call them with curl:
bootstrap, show_proc (ADMIN only), FE configs, the meta namespace (what the account may see),
and SQL over HTTP with Doris's result_set / exec_status replies and errors."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request

import pytest


def _call(server, path: str, body: dict | bytes | None = None, auth: str = "root:"):
    data = json.dumps(body).encode() if isinstance(body, dict) else body
    req = urllib.request.Request(f"http://{server.host}:{server.http_port}{path}", data=data,
                                 method="POST" if data is not None else "GET")
    req.add_header("Authorization", "Basic " + base64.b64encode(auth.encode()).decode())
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as e:
        return e.code, None


def test_rest_endpoints(server, fresh_db):
    conn = server.connect(fresh_db)
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE r (k INT, d DATE, v DECIMAL(10, 2)) DUPLICATE KEY(k) "
                    "DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ('replication_num' = '1')")
        cur.execute("INSERT INTO r VALUES (1, '2024-01-01', 1.50)")
        cur.execute("CREATE USER IF NOT EXISTS 'rest_u' IDENTIFIED BY 'pw'")
    conn.close()
    status, reply = _call(server, "/api/bootstrap")
    assert status == 200 and reply["code"] == 0 and reply["data"]["queryPort"] == server.port
    status, reply = _call(server, "/api/show_proc?path=/dbs")
    assert reply["msg"] == "success" and fresh_db in [row[1] for row in reply["data"]]
    assert _call(server, "/api/show_proc?path=/dbs", auth="rest_u:pw")[0] == 401
    status, reply = _call(server, "/rest/v1/config/fe")
    assert reply["data"]["column_names"][:2] == ["Key", "Value"] and reply["data"]["rows"]
    base = "/api/meta/namespaces/default_cluster/databases"
    assert fresh_db in _call(server, base)[1]["data"]
    assert fresh_db not in _call(server, base, auth="rest_u:pw")[1]["data"]
    assert _call(server, f"{base}/{fresh_db}/tables")[1]["data"] == ["r"]
    schema = _call(server, f"{base}/{fresh_db}/tables/r/schema")[1]["data"]["r"]["schema"]
    assert [(c["Field"], c["Type"]) for c in schema] == [("k", "INT"), ("d", "DATE"),
                                                        ("v", "DECIMAL(10, 2)")]
    query = f"/api/query/default_cluster/{fresh_db}"
    reply = _call(server, query, {"stmt": "SELECT k, d, v FROM r"})[1]
    assert reply["data"]["type"] == "result_set"
    assert reply["data"]["data"] == [[1, "2024-01-01", "1.50"]]
    assert [m["name"] for m in reply["data"]["meta"]] == ["k", "d", "v"]
    reply = _call(server, query, {"stmt": "INSERT INTO r VALUES (2, NULL, NULL)"})[1]
    assert reply["data"]["type"] == "exec_status"
    reply = _call(server, query, {"stmt": "SELECT nope FROM r"})[1]
    assert reply["code"] == 1 and "Unknown column 'nope'" in reply["msg"]
    reply = _call(server, query, b"not json")[1]
    assert reply["code"] == 1 and "stmt" in reply["msg"]
    reply = _call(server, query, {"stmt": "SELECT * FROM r"}, auth="rest_u:pw")[1]
    assert reply["code"] == 1 and "denied" in reply["msg"]


@pytest.mark.parametrize("path", ["/api/bootstrap", "/api/meta/namespaces/default_cluster/databases"])
def test_rest_needs_an_account(server, path):
    assert _call(server, path, auth="root:wrong")[0] == 401
