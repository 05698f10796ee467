"""information_schema.rowsets (catalog/information_schema_doris.py): every published rowset of
the tablets of the tables a user may see, with its versions, rows and segments; compaction's
merged rowsets show their version ranges (tests/concurrency/test_compaction_wire.py); a user without privileges on a table sees none of
its rowsets."""

from __future__ import annotations

from server_process import connect, unique_name


def _run(conn, sql: str):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall()


def _rowsets(conn, tablets: list[str]) -> list[tuple]:
    ids = ", ".join(tablets)
    return _run(conn, "SELECT TABLET_ID, START_VERSION, END_VERSION, ROWSET_NUM_ROWS, "
                      "NUM_SEGMENTS, TXN_ID, DATA_DISK_SIZE, CREATION_TIME, BACKEND_ID "
                      f"FROM information_schema.rowsets WHERE TABLET_ID IN ({ids}) "
                      "ORDER BY TABLET_ID, START_VERSION")


def test_rowsets_follow_loads_and_compaction(server):
    db = unique_name("isrs")
    root = server.connect()
    _run(root, f"CREATE DATABASE {db}")
    _run(root, f"CREATE TABLE {db}.t (k INT, v BIGINT SUM) AGGREGATE KEY(k) "
               "DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES ('replication_num' = '1')")
    for i in range(3):
        _run(root, f"INSERT INTO {db}.t VALUES ({i}, 1), ({i + 10}, 2)")
    tablets = [str(r[0]) for r in _run(root, f"SHOW TABLETS FROM {db}.t")]
    backends = {str(r[2]) for r in _run(root, f"SHOW TABLETS FROM {db}.t")}
    rows = _rowsets(root, tablets)
    assert [(r[1], r[2], r[3], r[4]) for r in rows] == [(2, 2, 2, 1), (3, 3, 2, 1), (4, 4, 2, 1)]
    assert len({r[5] for r in rows}) == 3 and all(r[6] > 0 and r[7] is not None for r in rows)
    assert {str(r[8]) for r in rows} == backends
    # the row count SHOW TABLETS reports is the rowsets' sum
    assert sum(r[3] for r in rows) == sum(int(r[10]) for r in _run(root, f"SHOW TABLETS FROM {db}.t"))

    # a DELETE publishes a rowset of no rows (a delete predicate) at its own version
    _run(root, f"DELETE FROM {db}.t WHERE k = 0")
    rows = _rowsets(root, tablets)
    assert [(r[1], r[2], r[3]) for r in rows][-1] == (5, 5, 0)
    user = f"{db}_u"
    _run(root, f"CREATE USER '{user}'@'%' IDENTIFIED BY 'pw'")
    other = connect(server.host, server.port, user=user, password="pw")
    assert _rowsets(other, tablets) == ()
    _run(root, f"GRANT SELECT_PRIV ON internal.{db}.t TO '{user}'@'%'")
    assert len(_rowsets(other, tablets)) == 4
    _run(root, f"DROP USER '{user}'@'%'")
    _run(root, f"DROP DATABASE {db}")
