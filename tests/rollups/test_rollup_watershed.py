"""Loads during an ALTER job's WAITING_TXN, as Doris's watershed transaction has them: the job
waits only for the loads begun before it (a two-phase Stream Load held pre-committed here);
loads begun after it (INSERT, Stream Load, DELETE, another two-phase load) go in at once and
write the shadow index too, and the finished rollup or new schema holds exactly the base's
rows: each row once, none lost. A twin table without rollups gets the same statements."""

from __future__ import annotations

import time

import pymysql
import pytest

from test_schema_change_job import _commit, _http, query

FAST = 5.0  # seconds: a load that waited at the gate would take 30


def _stream_load(server, db: str, body: bytes, two_phase: bool = False) -> dict:
    headers = {"column_separator": ","}
    if two_phase:
        headers["two_phase_commit"] = "true"
    reply = _http(server, f"/api/{db}/t/_stream_load", headers, body)
    assert reply["Status"] == "Success", reply
    return reply


def _csv(rows: list[tuple]) -> bytes:
    return b"".join(b"%d,%d,%d\n" % r for r in rows)


def _values(rows: list[tuple]) -> str:
    return ", ".join(f"({k}, {g}, {v})" for k, g, v in rows)


def _timed(conn, sql: str) -> None:
    started = time.monotonic()
    query(conn, sql)
    assert time.monotonic() - started < FAST, f"{sql} waited at the load gate"


def _state(conn, kind: str) -> list[str]:
    column = 9 if kind == "COLUMN" else 8
    return [r[column] for r in query(conn, f"SHOW ALTER TABLE {kind}")]


def _setup(conn, key: str = "DUPLICATE KEY(k)") -> None:
    for name in ("t", "twin"):
        query(conn, f"CREATE TABLE {name} (k INT, g INT, v INT) {key} DISTRIBUTED BY HASH(k) "
                    f"BUCKETS 3 PROPERTIES (\"replication_num\" = \"1\")")
        query(conn, f"INSERT INTO {name} VALUES {_values([(i, i % 4, i) for i in range(40)])}")


def _new_loads(server, db: str, conn, base: int) -> None:
    """Loads begun after the job: none waits; each also goes to the twin."""
    rows = [(base + i, i % 4, 100 + i) for i in range(30)]
    _timed(conn, f"INSERT INTO t VALUES {_values(rows[:10])}")
    query(conn, f"INSERT INTO twin VALUES {_values(rows[:10])}")
    started = time.monotonic()
    _stream_load(server, db, _csv(rows[10:20]))
    assert time.monotonic() - started < FAST
    query(conn, f"INSERT INTO twin VALUES {_values(rows[10:20])}")
    _timed(conn, "DELETE FROM t WHERE v = 105")
    query(conn, "DELETE FROM twin WHERE v = 105")


def test_add_rollup_lets_new_loads_in_while_waiting(server, fresh_db):
    conn = server.connect(fresh_db)
    _setup(conn)
    old_rows = [(100 + i, i % 4, 7) for i in range(20)]
    old = _stream_load(server, fresh_db, _csv(old_rows), two_phase=True)  # before the ALTER
    query(conn, "ALTER TABLE t ADD ROLLUP r_g (g, v)")
    assert _state(conn, "ROLLUP") == ["WAITING_TXN"]

    _new_loads(server, fresh_db, conn, 1000)
    late_rows = [(2000 + i, i % 4, 3) for i in range(15)]
    late = _stream_load(server, fresh_db, _csv(late_rows), two_phase=True)  # after the ALTER
    assert _state(conn, "ROLLUP") == ["WAITING_TXN"]  # still waiting for the old load only

    _commit(server, fresh_db, old["TxnId"])
    query(conn, f"INSERT INTO twin VALUES {_values(old_rows)}")
    query(conn, "ADMIN WAIT ALTER TABLE")
    assert _state(conn, "ROLLUP") == ["FINISHED"]
    _commit(server, fresh_db, late["TxnId"])  # pre-committed across the job: wrote r_g too
    query(conn, f"INSERT INTO twin VALUES {_values(late_rows)}")

    sql = "SELECT g, count(*), sum(v), min(v), max(v) FROM {} GROUP BY g ORDER BY g"
    plan = "\n".join(r[0] for r in query(conn, "EXPLAIN " + sql.format("t")))
    assert "rollup: r_g" in plan
    assert query(conn, sql.format("t")) == query(conn, sql.format("twin"))
    assert query(conn, "SELECT count(*) FROM t") == query(conn, "SELECT count(*) FROM twin")


def test_cancel_while_waiting_keeps_new_loads(server, fresh_db):
    """A load begun during WAITING_TXN wrote the shadow index; CANCEL drops that index, and the
    load still commits its base rows."""
    conn = server.connect(fresh_db)
    _setup(conn)
    old = _stream_load(server, fresh_db, _csv([(100, 1, 1)]), two_phase=True)
    query(conn, "ALTER TABLE t ADD ROLLUP r_g (g, v)")
    late = _stream_load(server, fresh_db, _csv([(200, 2, 2), (201, 3, 3)]), two_phase=True)
    query(conn, "CANCEL ALTER TABLE ROLLUP FROM t")
    assert _state(conn, "ROLLUP") == ["CANCELLED"]
    _commit(server, fresh_db, late["TxnId"])
    _commit(server, fresh_db, old["TxnId"])
    assert [r[0] for r in query(conn, "DESC t ALL") if r[0]] == ["t"]
    assert query(conn, "SELECT k, g, v FROM t WHERE k >= 100 ORDER BY k") == (
        (100, 1, 1), (200, 2, 2), (201, 3, 3))


@pytest.mark.parametrize("key", ["DUPLICATE KEY(k)", "UNIQUE KEY(k)"])
def test_heavy_schema_change_lets_new_loads_in_while_waiting(server, fresh_db, key):
    conn = server.connect(fresh_db)
    _setup(conn, key)
    old_rows = [(100 + i, i % 4, 7) for i in range(20)]
    old = _stream_load(server, fresh_db, _csv(old_rows), two_phase=True)
    query(conn, "ALTER TABLE t MODIFY COLUMN v BIGINT")
    assert _state(conn, "COLUMN") == ["WAITING_TXN"]
    _new_loads(server, fresh_db, conn, 1000)
    with pytest.raises(pymysql.err.OperationalError, match=r"state\(SCHEMA_CHANGE\)"):
        query(conn, "TRUNCATE TABLE t")
    _commit(server, fresh_db, old["TxnId"])
    query(conn, f"INSERT INTO twin VALUES {_values(old_rows)}")
    query(conn, "ADMIN WAIT ALTER TABLE")
    assert _state(conn, "COLUMN") == ["FINISHED"]
    assert [r[1] for r in query(conn, "DESC t") if r[0] == "v"] == ["BIGINT"]
    assert query(conn, "SELECT k, g, v FROM t ORDER BY k, g, v") == \
        query(conn, "SELECT k, g, v FROM twin ORDER BY k, g, v")
