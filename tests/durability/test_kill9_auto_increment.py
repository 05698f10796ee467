"""AUTO_INCREMENT ids after kill -9 (catalog/auto_increment.py): the counter is journaled with
every publish, so ids continue past every acknowledged one, replayed from the journal and
from an image checkpoint; no id repeats."""

from __future__ import annotations

import base64
import json
import urllib.request


def _rows(conn, sql: str):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall()


def test_ids_continue_after_kill9(server_factory):
    srv = server_factory().start()
    conn = srv.connect()
    _rows(conn, "CREATE DATABASE ai")
    _rows(conn, "CREATE TABLE ai.t (id BIGINT NOT NULL AUTO_INCREMENT(50), name VARCHAR(9)) "
                "DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 2 "
                "PROPERTIES ('replication_num' = '1')")
    _rows(conn, "INSERT INTO ai.t (name) VALUES ('a'), ('b'), ('c')")
    req = urllib.request.Request(  # a Stream Load leaving the column out takes ids too
        f"http://{srv.host}:{srv.http_port}/api/ai/t/_stream_load", data=b"d\ne\n",
        method="PUT", headers={"Authorization": "Basic " + base64.b64encode(b"root:").decode(),
                               "columns": "name"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        assert json.loads(resp.read())["NumberLoadedRows"] == 2
    for image in (False, True):
        srv.kill9()
        srv.start()
        conn = srv.connect()
        _rows(conn, f"INSERT INTO ai.t (name) VALUES ('after{int(image)}')")
        if not image:
            _rows(conn, 'ADMIN SET FRONTEND CONFIG ("edit_log_roll_num" = "1")')
            _rows(conn, "CREATE DATABASE ai_image")  # an entry, then an image
    ids = [r[0] for r in _rows(conn, "SELECT id FROM ai.t ORDER BY id")]
    assert len(ids) == len(set(ids)) == 7
    assert ids[:5] == [50, 51, 52, 53, 54] and min(ids[5:]) > 54
