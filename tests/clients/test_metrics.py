"""Prometheus `/metrics` on the HTTP port: Doris FE's metric names, statements and errors
counted per statement, latency quantiles, connections; Basic auth as every HTTP API."""

from __future__ import annotations

import base64
import re
import urllib.error
import urllib.request

import pymysql
import pytest


def _scrape(server, auth: str | None = "root:") -> dict[str, float]:
    req = urllib.request.Request(f"http://{server.host}:{server.http_port}/metrics")
    if auth is not None:
        req.add_header("Authorization", "Basic " + base64.b64encode(auth.encode()).decode())
    with urllib.request.urlopen(req, timeout=30) as resp:
        assert resp.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        text = resp.read().decode()
    values = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            values[name] = float(value)
    assert re.search(r"^# TYPE doris_fe_query_total counter$", text, re.M)
    return values


def test_metrics_count_statements_and_errors(server, fresh_db):
    before = _scrape(server)
    conn = server.connect(fresh_db)
    with conn.cursor() as cur:
        cur.execute("SELECT 1")
        with pytest.raises(pymysql.MySQLError):
            cur.execute("SELECT * FROM no_such_table")
        after = _scrape(server)
    assert after["doris_fe_query_total"] - before["doris_fe_query_total"] >= 2
    assert after["doris_fe_query_err"] - before["doris_fe_query_err"] >= 1
    assert after["doris_fe_connection_total"] >= 1
    assert after['doris_fe_query_latency_ms{quantile="0.99"}'] >= \
        after['doris_fe_query_latency_ms{quantile="0.75"}'] >= 0
    assert after["doris_fe_query_latency_ms_count"] == after["doris_fe_query_total"]
    assert after["process_resident_memory_bytes"] > 10 << 20
    conn.close()


def test_metrics_need_an_account(server):
    for auth in (None, "root:wrong-password"):
        with pytest.raises(urllib.error.HTTPError) as err:
            _scrape(server, auth)
        assert err.value.code == 401


def _families(server) -> dict:
    """The scrape parsed by prometheus_client's own parser: name -> (type, {labels: value})."""
    from prometheus_client.parser import text_string_to_metric_families
    req = urllib.request.Request(f"http://{server.host}:{server.http_port}/metrics")
    req.add_header("Authorization", "Basic " + base64.b64encode(b"root:").decode())
    with urllib.request.urlopen(req, timeout=30) as resp:
        text = resp.read().decode()
    return {f.name: (f.type, {(s.name, tuple(sorted(s.labels.items()))): s.value
                              for s in f.samples})
            for f in text_string_to_metric_families(text)}


def test_metrics_parse_with_prometheus_client(server, fresh_db):
    conn = server.connect(fresh_db)
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE t (k INT) DISTRIBUTED BY HASH(k) BUCKETS 1 "
                    "PROPERTIES ('replication_num' = '1')")
    before = _families(server)
    body = b"".join(b"%d\n" % i for i in range(250))
    req = urllib.request.Request(
        f"http://{server.host}:{server.http_port}/api/{fresh_db}/t/_stream_load", data=body,
        method="PUT", headers={"Authorization": "Basic " + base64.b64encode(b"root:").decode()})
    with urllib.request.urlopen(req, timeout=30) as resp:
        assert b'"Success"' in resp.read()
    req = urllib.request.Request(  # pre-committed: a running transaction until committed
        f"http://{server.host}:{server.http_port}/api/{fresh_db}/t/_stream_load", data=b"1\n",
        method="PUT", headers={"Authorization": "Basic " + base64.b64encode(b"root:").decode(),
                               "two_phase_commit": "true"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        assert b'"Success"' in resp.read()
    after = _families(server)
    conn.close()
    assert after["doris_fe_query"][0] == "counter"  # sample doris_fe_query_total
    assert ("doris_fe_query_total", ()) in after["doris_fe_query"][1]
    kind, samples = after["doris_fe_query_latency_ms"]
    assert kind == "summary"
    assert {dict(labels).get("quantile") for name, labels in samples
            if name == "doris_fe_query_latency_ms"} == {"0.75", "0.95", "0.98", "0.99", "0.999"}
    assert after["doris_fe_query_err"][1][("doris_fe_query_err", ())] >= 0
    assert after["doris_fe_connection_total"][0] == "gauge"
    assert after["doris_fe_txn_counter"][1][("doris_fe_txn_counter", (("type", "begin"),))] >= 1
    for family in ("doris_fe_max_journal_id", "doris_fe_tablet_num", "doris_fe_txn_num",
                   "doris_fe_tablet_max_compaction_score",
                   "doris_be_tablet_cumulative_max_compaction_score"):
        assert after[family][0] == "gauge"
    assert after["doris_fe_txn_num"][1][("doris_fe_txn_num", ())] >= 1
    rows = ("doris_be_stream_load", (("type", "load_rows"),))
    received = ("doris_be_stream_load", (("type", "receive_bytes"),))
    assert after["doris_be_stream_load"][1][rows] - before["doris_be_stream_load"][1][rows] == 251
    assert after["doris_be_stream_load"][1][received] - \
        before["doris_be_stream_load"][1][received] == len(body) + 2
    assert after["process_resident_memory_bytes"][1][("process_resident_memory_bytes", ())] > \
        10 << 20
