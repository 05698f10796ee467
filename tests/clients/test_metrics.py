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
