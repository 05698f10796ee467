"""SHOW STREAM LOAD over the Stream Loads the server ran (Doris's columns, WHERE LABEL = / LIKE,
STATUS, ORDER BY, LIMIT/OFFSET, LOAD_PRIV per table, the FE config that turns recording off),
and SHOW PROC '/transactions' and '/jobs' (per database, Doris's titles)."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request

import pymysql
import pytest

COLUMNS = ["Label", "Db", "Table", "ClientIp", "Status", "Message", "Url", "TotalRows",
           "LoadedRows", "FilteredRows", "UnselectedRows", "LoadBytes", "StartTime",
           "FinishTime", "User", "Comment"]

CSV = b"".join(b"%d,%d\n" % (i, i) for i in range(100))


def _put(server, db: str, table: str, body: bytes, headers: dict, auth: str = "root:") -> dict:
    req = urllib.request.Request(
        f"http://127.0.0.1:{server.http_port}/api/{db}/{table}/_stream_load", data=body,
        method="PUT", headers={**headers, "Authorization":
                               "Basic " + base64.b64encode(auth.encode()).decode()})
    with urllib.request.urlopen(req, timeout=60) as resp:
        return json.loads(resp.read())


def _rows(conn, sql: str) -> tuple[list[str], list[tuple]]:
    with conn.cursor() as cur:
        cur.execute(sql)
        return [d[0] for d in cur.description], [tuple(r) for r in cur.fetchall()]


@pytest.fixture()
def loaded(server, fresh_db):
    conn = server.connect(fresh_db)
    with conn.cursor() as cur:
        for t in ("t", "u"):
            cur.execute(f"CREATE TABLE {t} (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY "
                        f"HASH(k) BUCKETS 2 PROPERTIES ('replication_num' = '1')")
    csv = CSV
    assert _put(server, fresh_db, "t", csv, {"label": "day_2014_01_02_a", "column_separator":
                                             ",", "comment": "first"})["Status"] == "Success"
    assert _put(server, fresh_db, "t", b"1,x\nbad\n", {"label": "bad_1",
                                                       "column_separator": ","})["Status"] == "Fail"
    assert _put(server, fresh_db, "u", csv[:40], {"label": "day_2014_01_03",
                                                  "column_separator": ","})["Status"] == "Success"
    yield conn
    conn.close()


def test_show_stream_load_lists_the_loads(loaded, fresh_db):
    names, rows = _rows(loaded, "SHOW STREAM LOAD")
    assert names == COLUMNS
    by_label = {r[0]: dict(zip(names, r)) for r in rows}
    assert [r[0] for r in rows] == ["day_2014_01_02_a", "bad_1", "day_2014_01_03"]  # FinishTime
    first = by_label["day_2014_01_02_a"]
    assert (first["Db"], first["Table"], first["Status"], first["Message"], first["TotalRows"],
            first["LoadedRows"], first["LoadBytes"], first["User"], first["Comment"]) == \
        (fresh_db, "t", "Success", "OK", "100", "100", str(len(CSV)), "root", "first")
    assert first["ClientIp"] == "127.0.0.1" and first["Url"] == "N/A"
    assert first["StartTime"] <= first["FinishTime"]
    bad = by_label["bad_1"]
    assert bad["Status"] == "Fail" and bad["FilteredRows"] == "1" and \
        "_load_error_log" in bad["Url"]


def test_where_order_limit(loaded, fresh_db):
    label = lambda sql: [r[0] for r in _rows(loaded, sql)[1]]  # noqa: E731
    assert label(f"SHOW STREAM LOAD FROM `{fresh_db}` WHERE LABEL = 'bad_1'") == ["bad_1"]
    assert label("SHOW STREAM LOAD WHERE LABEL LIKE '2014_01'") == \
        ["day_2014_01_02_a", "day_2014_01_03"]  # LIKE: the label contains the matcher
    assert label("SHOW STREAM LOAD WHERE STATUS = 'fail'") == ["bad_1"]
    assert label("SHOW STREAM LOAD WHERE LABEL LIKE 'day' AND STATUS = 'SUCCESS' "
                 "ORDER BY Label DESC LIMIT 1") == ["day_2014_01_03"]
    assert label("SHOW STREAM LOAD ORDER BY TotalRows LIMIT 1 OFFSET 1") == ["day_2014_01_03"]
    with pytest.raises(pymysql.MySQLError) as err:
        loaded.cursor().execute("SHOW STREAM LOAD WHERE STATUS = 'RUNNING'")
    assert "Where clause should looks like" in str(err.value)
    with pytest.raises(pymysql.MySQLError) as err:
        loaded.cursor().execute("SHOW STREAM LOAD ORDER BY nope")
    assert "Title name[nope] does not exist" in str(err.value)


def test_load_privilege_and_recording_switch(server, loaded, fresh_db):
    root = server.connect()
    user = f"sl_{fresh_db[-6:]}"
    with root.cursor() as cur:
        cur.execute(f"CREATE USER '{user}'@'%' IDENTIFIED BY 'pw'")
        cur.execute(f"GRANT LOAD_PRIV ON `{fresh_db}`.u TO '{user}'@'%'")
    other = pymysql.connect(host="127.0.0.1", port=server.port, user=user, password="pw",
                            database=fresh_db)
    assert [r[0] for r in _rows(other, "SHOW STREAM LOAD")[1]] == ["day_2014_01_03"]
    other.close()
    try:
        with root.cursor() as cur:
            cur.execute('ADMIN SET FRONTEND CONFIG ("enable_stream_load_record" = "false")')
        _put(server, fresh_db, "t", b"5,5\n", {"label": "unrecorded", "column_separator": ","})
        assert "unrecorded" not in [r[0] for r in _rows(loaded, "SHOW STREAM LOAD")[1]]
    finally:
        with root.cursor() as cur:
            cur.execute('ADMIN SET FRONTEND CONFIG ("enable_stream_load_record" = "true")')
            cur.execute(f"DROP USER '{user}'@'%'")
        root.close()


def test_proc_transactions_and_jobs(server, loaded, fresh_db):
    _put(server, fresh_db, "t", b"7,7\n", {"label": "pre_1", "column_separator": ",",
                                           "two_phase_commit": "true"})
    with loaded.cursor() as cur:
        cur.execute("ALTER TABLE u ADD ROLLUP r1 (k)")
    assert _rows(loaded, "SHOW PROC '/'")[1].count(("transactions",)) == 1
    names, rows = _rows(loaded, "SHOW PROC '/transactions'")
    assert names == ["DbId", "DbName"]
    db_id = next(r[0] for r in rows if r[1] == fresh_db)
    assert _rows(loaded, f"SHOW PROC '/transactions/{db_id}'") == \
        (["State", "Number"], [("running", "1"), ("finished", "2")])
    names, rows = _rows(loaded, f"SHOW PROC '/transactions/{db_id}/finished'")
    assert names[:5] == ["TransactionId", "Label", "Coordinator", "TransactionStatus",
                         "LoadJobSourceType"] and names[-1] == "ErrMsg" and len(names) == 15
    assert [(r[1], r[3], r[4]) for r in rows] == [
        ("day_2014_01_03", "VISIBLE", "BACKEND_STREAMING"),
        ("day_2014_01_02_a", "VISIBLE", "BACKEND_STREAMING")]  # newest first
    assert rows[0][8] != "NULL" and rows[0][8] == rows[0][9]  # PublishTime, FinishTime
    rows = _rows(loaded, f"SHOW PROC '/transactions/{db_id}/running'")[1]
    assert [(r[1], r[3]) for r in rows] == [("pre_1", "PRECOMMITTED")]
    with loaded.cursor() as cur:
        cur.execute("INSERT INTO u WITH LABEL ins_1 VALUES (1, 1)")
    rows = _rows(loaded, f"SHOW PROC '/transactions/{db_id}/finished'")[1]
    assert (rows[0][1], rows[0][4]) == ("ins_1", "INSERT_STREAMING")
    with pytest.raises(pymysql.MySQLError) as err:
        loaded.cursor().execute(f"SHOW PROC '/transactions/{db_id}/nope'")
    assert "doesn't exist" in str(err.value)

    assert _rows(loaded, "SHOW PROC '/jobs'")[0] == ["DbId", "DbName"]
    names, rows = _rows(loaded, f"SHOW PROC '/jobs/{db_id}'")
    assert names == ["JobType", "Pending", "Running", "Finished", "Cancelled", "Total"]
    assert [r[0] for r in rows] == ["load", "delete", "rollup", "schema_change", "export"]
    rollup = dict(zip(names, rows[2]))
    assert rollup["Total"] == "1" and int(rollup["Running"]) + int(rollup["Finished"]) == 1
    with pytest.raises(pymysql.MySQLError) as err:
        loaded.cursor().execute("SHOW PROC '/jobs/abc'")
    assert "Invalid db id format: abc" in str(err.value)
