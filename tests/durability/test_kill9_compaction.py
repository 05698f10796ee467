"""kill -9 at any point of a compaction loses nothing and leaves no corrupt tablet.

The server is killed at each of compaction's debug points (catalog/compaction.py: before the
merge, with the merged output written but not journaled, right after the swap) and at a random
moment of a run of loads, DELETEs and background compactions; after the restart the data is
exactly what was acknowledged, every segment file belongs to a published rowset, and the
tablet compacts and loads again.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

DDL = ("CREATE TABLE acc (k INT NOT NULL, v BIGINT SUM DEFAULT '0') AGGREGATE KEY(k) "
       "DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ('replication_num' = '1')")
CONF = ("cumulative_compaction_skip_window_seconds = 0\ncumulative_compaction_min_deltas = 2\n"
        "base_compaction_num_cumulative_deltas = 1\n")


def query(conn, sql):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall() if cur.description else cur.rowcount


def segment_files(data_dir: Path) -> set[str]:
    return {p.name for p in (data_dir / "storage" / "data").rglob("*.dat")}


def published_segments(conn) -> int:
    return sum(int(r[15]) for r in query(conn, "SHOW TABLETS FROM acc"))  # VersionCount


def prepare(srv, loads: int = 6) -> dict:
    conn = srv.connect()
    query(conn, "CREATE DATABASE c")
    query(conn, "USE c")
    query(conn, DDL)
    model: dict[int, int] = {}
    for i in range(loads):
        rows = [(k, i + k) for k in range(i, i + 5)]
        query(conn, "INSERT INTO acc VALUES " + ", ".join(f"({k}, {v})" for k, v in rows))
        for k, v in rows:
            model[k] = model.get(k, 0) + v
    query(conn, "DELETE FROM acc WHERE k = 3")
    model.pop(3, None)
    query(conn, "INSERT INTO acc VALUES (3, 100)")
    model[3] = 100
    conn.close()
    return model


def check(srv, model: dict) -> None:
    conn = srv.connect("c")
    assert dict(query(conn, "SELECT k, v FROM acc")) == model
    # still writable and compactable
    query(conn, "INSERT INTO acc VALUES (1000, 1)")
    query(conn, "ADMIN COMPACT TABLE acc PARTITION acc WHERE type = 'CUMULATIVE'")
    query(conn, "ADMIN COMPACT TABLE acc PARTITION acc WHERE type = 'BASE'")
    assert dict(query(conn, "SELECT k, v FROM acc")) == {**model, 1000: 1}
    conn.close()


@pytest.mark.parametrize("point", ["compaction.before_merge", "compaction.after_merge",
                                   "compaction.after_swap"])
def test_kill9_at_each_point_of_a_compaction(server_factory, tmp_path, monkeypatch, point):
    conf = tmp_path / "c.conf"
    conf.write_text(CONF + "disable_auto_compaction = true\n")
    srv = server_factory(extra_args=("--config", str(conf))).start()
    model = prepare(srv)
    srv.stop()
    monkeypatch.setenv("MINIDORIS_DEBUG_POINTS", point)
    srv.start()
    conn = srv.connect("c")
    with pytest.raises(Exception):  # the server dies inside the statement
        query(conn, "ADMIN COMPACT TABLE acc PARTITION acc WHERE type = 'CUMULATIVE'")
    srv.proc.wait(timeout=10)
    srv.kill9()
    monkeypatch.delenv("MINIDORIS_DEBUG_POINTS")
    srv.start()
    conn = srv.connect("c")
    assert dict(query(conn, "SELECT k, v FROM acc")) == model
    # no debris: every segment file on disk belongs to a published rowset
    files = segment_files(srv.data_dir)
    assert len(files) <= published_segments(conn)
    conn.close()
    check(srv, model)


def test_kill9_during_background_compaction_and_loads(server_factory, tmp_path):
    conf = tmp_path / "c.conf"
    conf.write_text(CONF + "generate_compaction_tasks_min_interval_ms = 5\n"
                    "cumulative_compaction_rounds_for_each_base_compaction_round = 1\n")
    srv = server_factory(extra_args=("--config", str(conf))).start()
    model = prepare(srv, loads=3)
    rng = random.Random(7)
    conn = srv.connect("c")
    for i in range(40):  # acknowledged loads while compaction runs in the background
        k = rng.randrange(50)
        query(conn, f"INSERT INTO acc VALUES ({k}, {i + 1})")
        model[k] = model.get(k, 0) + i + 1
    time.sleep(rng.uniform(0.0, 0.3))
    srv.kill9()
    srv.start()
    check(srv, model)
