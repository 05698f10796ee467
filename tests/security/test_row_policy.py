"""Row policies through the wire (Doris's CREATE / DROP / SHOW ROW POLICY): a user, or a role's
users, read a table through its filters (RESTRICTIVE ones AND-ed, PERMISSIVE ones OR-ed), on
every path a read takes: queries, joins, aggregates, key lookups that would take the short
circuit, INSERT ... SELECT, EXPLAIN; policies survive a restart; DDL is ADMIN only and
checked (unknown column, root, duplicates, unknown policy)."""

from __future__ import annotations

import pymysql
import pytest

from server_process import connect, unique_name


def _q(conn, sql: str) -> list[tuple]:
    with conn.cursor() as cur:
        cur.execute(sql)
        return list(cur.fetchall())


def _err(conn, sql: str) -> tuple[int, str]:
    with pytest.raises(pymysql.MySQLError) as e:
        _q(conn, sql)
    return e.value.args[0], e.value.args[1]


@pytest.fixture
def policy_db(server):
    db = unique_name("rp")
    root = server.connect()
    _q(root, f"CREATE DATABASE {db}")
    _q(root, f"""CREATE TABLE {db}.t (k INT, region VARCHAR(8), v INT) UNIQUE KEY(k)
        DISTRIBUTED BY HASH(k) BUCKETS 3 PROPERTIES ("replication_num" = "1",
        "enable_unique_key_merge_on_write" = "true")""")
    _q(root, f"INSERT INTO {db}.t VALUES (1, 'east', 10), (2, 'west', 20), (3, 'east', 30), "
             f"(4, 'north', 40), (5, 'west', 50)")
    _q(root, f"CREATE TABLE {db}.sink (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) "
             f"BUCKETS 1 PROPERTIES ('replication_num' = '1')")
    yield db, root
    root.close()


def test_user_and_role_policies(server, policy_db):
    db, root = policy_db
    user, other, role = unique_name("rpu"), unique_name("rpo"), unique_name("rpr")
    _q(root, f"CREATE USER {user} IDENTIFIED BY 'pw'")
    _q(root, f"GRANT SELECT_PRIV, LOAD_PRIV ON {db}.* TO {user}")
    _q(root, f"CREATE ROLE {role}")
    _q(root, f"GRANT SELECT_PRIV ON {db}.* TO ROLE '{role}'")
    _q(root, f"CREATE USER {other} IDENTIFIED BY 'pw' DEFAULT ROLE '{role}'")
    _q(root, f"CREATE ROW POLICY east ON {db}.t AS PERMISSIVE TO {user} USING (region = 'east')")
    _q(root, f"CREATE ROW POLICY k5 ON {db}.t AS PERMISSIVE TO {user} USING (k = 5)")
    _q(root, f"CREATE ROW POLICY small ON {db}.t AS RESTRICTIVE TO {user} USING (v < 50)")
    _q(root, f"CREATE ROW POLICY r ON {db}.t AS RESTRICTIVE TO ROLE {role} USING (k > 3)")
    u = connect(server.host, server.port, db, user=user, password="pw")
    o = connect(server.host, server.port, db, user=other, password="pw")
    # (east OR k = 5) AND v < 50: rows 1 and 3
    assert _q(u, "SELECT k FROM t ORDER BY k") == [(1,), (3,)]
    assert _q(u, "SELECT count(*), sum(v) FROM t") == [(2, 40)]
    assert _q(u, "SELECT k FROM t WHERE k = 2") == []  # a key lookup: not the short circuit
    assert _q(u, "SELECT k FROM t WHERE k = 3") == [(3,)]
    assert _q(u, "SELECT a.k FROM t a JOIN t b ON a.k = b.k ORDER BY a.k") == [(1,), (3,)]
    assert _q(u, "SELECT k FROM (SELECT * FROM t) s WHERE k > 1") == [(3,)]
    _q(u, "INSERT INTO sink SELECT k, v FROM t")
    assert _q(root, f"SELECT k FROM {db}.sink ORDER BY k") == [(1,), (3,)]
    plan = "\n".join(r[0] for r in _q(u, "EXPLAIN SELECT * FROM t"))
    assert "`v` < 50" in plan and "'east'" in plan
    assert _q(o, "SELECT k FROM t ORDER BY k") == [(4,), (5,)]
    assert _q(root, f"SELECT count(*) FROM {db}.t") == [(5,)]  # no policy for root
    shown = _q(root, f"SHOW ROW POLICY FOR {user}")
    assert {(r[0], r[1], r[2], r[3], r[4]) for r in shown} == {
        ("east", db, "t", "ROW", "PERMISSIVE"), ("k5", db, "t", "ROW", "PERMISSIVE"),
        ("small", db, "t", "ROW", "RESTRICTIVE")}
    assert [r[0] for r in _q(root, f"SHOW ROW POLICY FOR ROLE {role}")] == ["r"]
    _q(root, f"DROP ROW POLICY small ON {db}.t FOR {user}")
    assert _q(u, "SELECT k FROM t ORDER BY k") == [(1,), (3,), (5,)]
    _q(root, f"DROP ROW POLICY east ON {db}.t")
    _q(root, f"DROP ROW POLICY k5 ON {db}.t")
    assert _q(u, "SELECT count(*) FROM t") == [(5,)]
    u.close()
    o.close()


def test_policy_ddl_errors_and_privileges(server, policy_db):
    db, root = policy_db
    user = unique_name("rpe")
    _q(root, f"CREATE USER {user} IDENTIFIED BY 'pw'")
    _q(root, f"GRANT SELECT_PRIV ON {db}.* TO {user}")
    _q(root, f"CREATE ROW POLICY p ON {db}.t AS RESTRICTIVE TO {user} USING (k = 1)")
    assert "already create" in _err(root, f"CREATE ROW POLICY p ON {db}.t AS RESTRICTIVE TO "
                                          f"{user} USING (k = 2)")[1]
    _q(root, f"CREATE ROW POLICY IF NOT EXISTS p ON {db}.t AS RESTRICTIVE TO {user} "
             f"USING (k = 2)")
    assert _err(root, f"CREATE ROW POLICY q ON {db}.t AS RESTRICTIVE TO {user} "
                      f"USING (nope = 1)")[0] == 1054
    assert "root or admin" in _err(root, f"CREATE ROW POLICY q ON {db}.t AS RESTRICTIVE TO "
                                         f"root USING (k = 1)")[1]
    assert "does not exist" in _err(root, f"CREATE ROW POLICY q ON {db}.t AS RESTRICTIVE TO "
                                          f"nobody_here USING (k = 1)")[1]
    assert "not exist" in _err(root, f"DROP ROW POLICY q ON {db}.t")[1]
    _q(root, f"DROP ROW POLICY IF EXISTS q ON {db}.t")
    u = connect(server.host, server.port, db, user=user, password="pw")
    assert _err(u, f"CREATE ROW POLICY q ON {db}.t AS RESTRICTIVE TO {user} "
                   f"USING (k = 1)")[0] == 1227
    assert _err(u, "SHOW ROW POLICY")[0] == 1227
    assert _q(u, "SELECT k, region FROM t") == [(1, "east")]
    u.close()


def test_connector_read_api_reads_through_policies(server, policy_db):
    # the Spark connector's _query_plan / _tablet_scan bind the plan as the Basic-auth user:
    # its row policies apply, even to a plan root made
    import pyarrow as pa
    from test_accounts import _post
    db, root = policy_db
    user = unique_name("rps")
    _q(root, f"CREATE USER {user} IDENTIFIED BY 'pw'")
    _q(root, f"GRANT SELECT_PRIV ON {db}.* TO {user}")
    _q(root, f"CREATE ROW POLICY w ON {db}.t AS RESTRICTIVE TO {user} USING (region = 'west')")
    for auth in (f"{user}:pw", "root:"):
        status, body = _post(server, f"/api/{db}/t/_query_plan",
                             {"sql": f"select k, v from {db}.t"}, auth)
        assert status == 200, body
        plan = __import__("json").loads(body)["data"]
        scan = {"opaqued_query_plan": plan["opaqued_query_plan"],
                "tablet_ids": [int(t) for t in plan["partitions"]]}
        status, body = _post(server, "/api/_tablet_scan", scan, f"{user}:pw")
        assert status == 200, body
        rows = pa.ipc.open_stream(body).read_all().to_pylist()
        assert sorted(r["k"] for r in rows) == [2, 5], (auth, rows)
