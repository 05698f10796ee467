"""Accounts through the wire: logins and passwords (mysql_native_password, 1045), SHOW GRANTS /
SHOW ROLES layouts, roles, restarts, the conf's root password, HTTP Basic auth for Stream Load,
per-user connection limits, KILL and PROCESSLIST of other users."""

from __future__ import annotations

import base64
import hashlib
import json
import urllib.error
import urllib.request

import pymysql
import pytest

from server_process import connect, unique_name


def _login(server, user: str, password: str = "", db: str | None = None):
    return connect(server.host, server.port, db, user=user, password=password)


def _q(conn, sql: str) -> list[tuple]:
    with conn.cursor() as cur:
        cur.execute(sql)
        return list(cur.fetchall())


def _err(conn_or_fn, sql: str | None = None) -> tuple[int, str]:
    try:
        if sql is None:
            conn_or_fn()
        else:
            _q(conn_or_fn, sql)
    except pymysql.MySQLError as e:
        return e.args[0], e.args[1]
    raise AssertionError(f"expected an error from {sql}")


def test_login_passwords_and_grants(server):
    root = server.connect()
    u = unique_name("acct")
    _q(root, f"CREATE USER '{u}'@'%' IDENTIFIED BY 's3cret' COMMENT 'app'")
    assert _err(root, f"CREATE USER '{u}'@'%'")[0] == 1105  # exists
    _q(root, f"CREATE USER IF NOT EXISTS '{u}'@'%'")
    code, msg = _err(lambda: _login(server, u, "wrong"))
    assert (code, msg) == (1045, f"Access denied for user '{u}@127.0.0.1' (using password: YES)")
    assert _err(lambda: _login(server, u, ""))[1].endswith("(using password: NO)")
    assert _err(lambda: _login(server, "nobody_" + u, "x"))[0] == 1045
    conn = _login(server, u, "s3cret")
    # USER() / CURRENT_USER() name the logged-in account, as Doris prints them
    assert [tuple(r) for r in _q(conn, "SELECT USER(), CURRENT_USER(), SESSION_USER()")] == \
        [(f"'{u}'@'127.0.0.1'", f"'{u}'@'%'", f"'{u}'@'127.0.0.1'")]
    rows = _q(conn, "SHOW GRANTS")
    assert rows == [(f"'{u}'@'%'", "app", "Yes", "", None, None,
                     "internal.information_schema: Select_priv; internal.mysql: Select_priv",
                     None, None, None, None)]
    # the stored password is the double SHA-1 only: SET PASSWORD with a hash logs in with the
    # clear text that hashes to it
    hashed = "*" + hashlib.sha1(hashlib.sha1(b"n3w").digest()).hexdigest().upper()
    _q(conn, f"SET PASSWORD = '{hashed}'")
    conn.close()
    assert _err(lambda: _login(server, u, "s3cret"))[0] == 1045
    _login(server, u, "n3w").close()
    _q(root, f"SET PASSWORD FOR '{u}'@'%' = PASSWORD('third')")
    _login(server, u, "third").close()
    _q(root, f"ALTER USER '{u}'@'%' IDENTIFIED BY 'fourth'")
    _login(server, u, "fourth").close()
    _q(root, f"DROP USER '{u}'@'%'")
    assert _err(lambda: _login(server, u, "fourth"))[0] == 1045


def test_a_new_user_reads_the_system_databases_only(server):
    """Every user sees and reads information_schema and mysql (Doris's default Select_priv on
    both), sees no other database without a grant, and cannot drop either."""
    root = server.connect()
    u, db = unique_name("sysdb"), unique_name("sysdb_db")
    _q(root, f"CREATE DATABASE {db}")
    _q(root, f"CREATE USER '{u}'@'%' IDENTIFIED BY 'pw'")
    conn = _login(server, u, "pw", db="mysql")
    assert _q(conn, "SHOW DATABASES") == [("information_schema",), ("mysql",)]
    assert _q(conn, "SELECT DATABASE()") == [("mysql",)]
    assert _q(conn, "SHOW TABLES") == [("procs_priv",), ("user",)]
    assert _q(conn, "SELECT COUNT(*) FROM mysql.procs_priv") == [(0,)]
    assert _q(conn, "SELECT SCHEMA_NAME FROM information_schema.schemata") == \
        [("information_schema",), ("mysql",)]
    assert _err(conn, "DROP DATABASE mysql") == \
        (1044, f"errCode = 2, detailMessage = Access denied for user '{u}' to database 'mysql'")
    assert _err(conn, f"USE {db}")[0] == 1044
    _q(root, f"DROP USER '{u}'@'%'")
    _q(root, f"DROP DATABASE {db}")


def test_roles_and_show_layouts(server):
    root = server.connect()
    u, r, db = unique_name("ru"), unique_name("role"), unique_name("rdb")
    _q(root, f"CREATE DATABASE {db}")
    _q(root, f"CREATE TABLE {db}.t (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    _q(root, f"CREATE ROLE {r} COMMENT 'readers'")
    _q(root, f"GRANT SELECT_PRIV ON {db}.* TO ROLE '{r}'")
    _q(root, f"GRANT LOAD_PRIV, ALTER_PRIV ON {db}.t TO ROLE '{r}'")
    _q(root, f"CREATE USER '{u}'@'%' IDENTIFIED BY 'pw' DEFAULT ROLE '{r}'")
    roles = {row[0]: row for row in _q(root, "SHOW ROLES")}
    assert roles[r] == (r, "readers", f"'{u}'@'%'", None, None, f"internal.{db}: Select_priv",
                        f"internal.{db}.t: Load_priv,Alter_priv", None, None)
    assert roles["operator"][3] == "Node_priv,Admin_priv"
    grants = _q(root, f"SHOW GRANTS FOR '{u}'@'%'")[0]
    assert grants[3] == r and f"internal.{db}: Select_priv" in grants[6]
    root_row = _q(root, "SHOW GRANTS")[0]
    assert root_row[:5] == ("'root'@'%'", "ROOT", "No", "operator", "Node_priv,Admin_priv")
    conn = _login(server, u, "pw")
    _q(conn, f"INSERT INTO {db}.t VALUES (1)")
    assert _q(conn, f"SELECT k FROM {db}.t") == [(1,)]
    _q(root, f"REVOKE SELECT_PRIV ON {db}.* FROM ROLE '{r}'")
    code, msg = _err(conn, f"SELECT k FROM {db}.t")
    assert code == 1142 and msg == (f"errCode = 2, detailMessage = SELECT command denied to user "
                                    f"'{u}'@'127.0.0.1' for table 'internal: {db}: t'")
    _q(root, f"DROP ROLE {r}")
    assert _err(conn, f"INSERT INTO {db}.t VALUES (2)")[0] == 1142
    assert _err(conn, "SHOW ALL GRANTS")[0] == 1227
    conn.close()
    _q(root, f"DROP USER '{u}'@'%'")
    _q(root, f"DROP DATABASE {db}")


def test_accounts_survive_restart_and_conf_root_password(server_factory, tmp_path):
    srv = server_factory().start()
    root = srv.connect()
    _q(root, "CREATE USER 'app'@'%' IDENTIFIED BY 'pw'")
    _q(root, "CREATE ROLE writer")
    _q(root, "GRANT LOAD_PRIV ON *.*.* TO ROLE 'writer'")
    _q(root, "GRANT 'writer' TO 'app'@'%'")
    _q(root, "GRANT SELECT_PRIV ON internal.d.* TO 'app'@'%'")
    _q(root, "SET PROPERTY FOR 'app' 'max_user_connections' = '7'")
    before = _q(root, "SHOW ALL GRANTS")
    srv.kill9()  # acknowledged account changes are journaled
    srv.start()
    assert _q(srv.connect(), "SHOW ALL GRANTS") == before
    app = _login(srv, "app", "pw")
    assert _q(app, "SHOW PROPERTY") == [("max_user_connections", "7"), ("sql_block_rules", "")]
    app.close()
    srv.stop()
    hashed = "*" + hashlib.sha1(hashlib.sha1(b"rootpw").digest()).hexdigest().upper()
    conf = tmp_path / "locked.conf"
    conf.write_text(f"initial_root_password = {hashed}\n")
    srv.extra_args = ("--config", str(conf))
    srv.start()
    assert _err(lambda: srv.connect())[0] == 1045
    root = _login(srv, "root", "rootpw")
    assert _q(root, "SHOW GRANTS")[0][2] == "Yes"
    _login(srv, "app", "pw").close()


def _put(server, db: str, table: str, body: bytes, auth: str | None) -> tuple[int, dict]:
    headers = {"column_separator": ","}
    if auth is not None:
        headers["Authorization"] = "Basic " + base64.b64encode(auth.encode()).decode()
    req = urllib.request.Request(f"http://127.0.0.1:{server.http_port}/api/{db}/{table}"
                                 "/_stream_load", data=body, method="PUT", headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_stream_load_basic_auth_and_load_priv(server):
    root = server.connect()
    u, db = unique_name("sl"), unique_name("sldb")
    _q(root, f"CREATE DATABASE {db}")
    _q(root, f"CREATE TABLE {db}.t (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    _q(root, f"CREATE USER '{u}'@'%' IDENTIFIED BY 'pw'")
    status, reply = _put(server, db, "t", b"1,2\n", f"{u}:bad")
    assert status == 401 and "Access denied" in reply["msg"]
    assert _put(server, db, "t", b"1,2\n", None)[0] == 401
    status, reply = _put(server, db, "t", b"1,2\n", f"{u}:pw")
    assert status == 401 and "LOAD command denied" in reply["msg"]
    _q(root, f"GRANT LOAD_PRIV ON {db}.t TO '{u}'@'%'")
    status, reply = _put(server, db, "t", b"1,2\n3,4\n", f"{u}:pw")
    assert status == 200 and reply["Status"] == "Success", reply
    assert _q(root, f"SELECT count(*) FROM {db}.t") == [(2,)]
    _q(root, f"DROP USER '{u}'@'%'")
    _q(root, f"DROP DATABASE {db}")


def _post(server, path: str, body: dict, auth: str) -> tuple[int, bytes]:
    headers = {"Authorization": "Basic " + base64.b64encode(auth.encode()).decode()}
    req = urllib.request.Request(f"http://127.0.0.1:{server.http_port}{path}", method="POST",
                                 data=json.dumps(body).encode(), headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def test_connector_read_api_needs_select_on_the_scanned_table(server):
    # the Spark connector's plan and tablet scan run as the Basic-auth user: SELECT_PRIV on
    # every table the plan reads, whatever the (client-held, forgeable) opaque plan says
    root = server.connect()
    u, db = unique_name("rd"), unique_name("rddb")
    _q(root, f"CREATE DATABASE {db}")
    for t in ("t", "secret"):
        _q(root, f"CREATE TABLE {db}.{t} (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
        _q(root, f"INSERT INTO {db}.{t} VALUES (1), (2)")
    _q(root, f"CREATE USER '{u}'@'%' IDENTIFIED BY 'pw'")
    _q(root, f"GRANT SELECT_PRIV ON {db}.t TO '{u}'@'%'")
    plan_path = f"/api/{db}/t/_query_plan"
    status, body = _post(server, plan_path, {"sql": f"select k from {db}.t"}, f"{u}:pw")
    assert status == 200, body
    plan = json.loads(body)["data"]
    scan = {"opaqued_query_plan": plan["opaqued_query_plan"],
            "tablet_ids": [int(t) for t in plan["partitions"]]}
    assert _post(server, "/api/_tablet_scan", scan, f"{u}:pw")[0] == 200
    status, body = _post(server, plan_path, {"sql": f"select k from {db}.t where k in "
                                                    f"(select k from {db}.secret)"}, f"{u}:pw")
    assert status == 401 and b"SELECT command denied" in body
    status, body = _post(server, f"/api/{db}/secret/_query_plan",
                         {"sql": f"select k from {db}.secret"}, f"{u}:pw")
    assert status == 401
    secret = json.loads(_post(server, f"/api/{db}/secret/_query_plan",
                              {"sql": f"select k from {db}.secret"}, "root:")[1])["data"]
    forged = {"opaqued_query_plan": secret["opaqued_query_plan"],
              "tablet_ids": [int(t) for t in secret["partitions"]]}
    status, body = _post(server, "/api/_tablet_scan", forged, f"{u}:pw")
    assert status == 401 and b"SELECT command denied" in body, body
    _q(root, f"REVOKE SELECT_PRIV ON {db}.t FROM '{u}'@'%'")
    assert _post(server, "/api/_tablet_scan", scan, f"{u}:pw")[0] == 401
    _q(root, f"DROP USER '{u}'@'%'")
    _q(root, f"DROP DATABASE {db}")


def test_connection_limit_kill_and_processlist(server):
    root = server.connect()
    u, other = unique_name("lim"), unique_name("oth")
    _q(root, f"CREATE USER '{u}'@'%' IDENTIFIED BY 'pw'")
    _q(root, f"CREATE USER '{other}'@'%' IDENTIFIED BY 'pw'")
    _q(root, f"SET PROPERTY FOR '{u}' 'max_user_connections' = '2'")
    first, second = _login(server, u, "pw"), _login(server, u, "pw")
    code, msg = _err(lambda: _login(server, u, "pw"))
    assert code == 1203 and "max_user_connections" in msg
    mine = {row[1] for row in _q(first, "SHOW PROCESSLIST")}
    assert len(mine) == 2  # only the user's own connections
    intruder = _login(server, other, "pw")
    victim = _q(first, "SELECT CONNECTION_ID()")[0][0]
    code, msg = _err(intruder, f"KILL {victim}")
    assert (code, msg) == (1095, f"errCode = 2, detailMessage = You are not owner of thread or "
                                 f"query: {victim}")
    assert _q(first, "SELECT 1") == [(1,)]
    second.close()
    _login(server, u, "pw").close()  # a slot is free again
    for c in (first, intruder):
        c.close()
    _q(root, f"DROP USER '{u}'@'%'")
    _q(root, f"DROP USER '{other}'@'%'")


@pytest.mark.parametrize("sql, code", [
    ("GRANT ADMIN_PRIV ON db.* TO root", 1105),
    ("GRANT NOPE_PRIV ON *.*.* TO root", 1105),
    ("DROP USER root", 1105),
    ("CREATE USER 'x'@'%' IDENTIFIED BY PASSWORD 'nothex'", 1105),
    ("GRANT SELECT_PRIV ON *.*.* TO 'ghost_user'@'%'", 1105),
    ("DROP ROLE operator", 1105),
])
def test_account_statement_errors(server, sql, code):
    assert _err(server.connect(), sql)[0] == code


def test_rollup_temp_partition_load_and_resource_statements_need_privileges(server):
    # statements of the rollup, temporary partition and Spark Load work are checked as Doris:
    # ALTER on the table, LOAD on LOAD LABEL's targets, ADMIN for resources and compaction
    root = server.connect()
    u, db = unique_name("al"), unique_name("aldb")
    _q(root, f"CREATE DATABASE {db}")
    _q(root, f"CREATE TABLE {db}.p (k INT, v INT) DUPLICATE KEY(k) PARTITION BY RANGE(k) "
             "(PARTITION p1 VALUES LESS THAN (10)) DISTRIBUTED BY HASH(k) BUCKETS 1")
    _q(root, f"CREATE USER '{u}'@'%' IDENTIFIED BY 'pw'")
    _q(root, f"GRANT SELECT_PRIV ON {db}.p TO '{u}'@'%'")
    conn = _login(server, u, "pw")
    for sql in (f"ALTER TABLE {db}.p ADD ROLLUP r (v, k)",
                f"ALTER TABLE {db}.p DROP ROLLUP r",
                f"CREATE MATERIALIZED VIEW mv AS SELECT k, sum(v) FROM {db}.p GROUP BY k",
                f"ALTER TABLE {db}.p ADD TEMPORARY PARTITION tp VALUES LESS THAN (10)",
                f"ALTER TABLE {db}.p REPLACE PARTITION (p1) WITH TEMPORARY PARTITION (tp)",
                f"LOAD LABEL {db}.l1 (DATA INFILE('file:///nope.csv') INTO TABLE p) "
                "WITH RESOURCE 'r0'"):
        code, msg = _err(conn, sql)
        assert code == 1142 and "command denied" in msg, (sql, msg)
    for sql in ("CREATE RESOURCE 'r_x' PROPERTIES ('type' = 'spark', 'spark.master' = 'local[1]')",
                f"ADMIN COMPACT TABLE {db}.p PARTITION p1 WHERE type = 'CUMULATIVE'"):
        assert _err(conn, sql)[0] == 1227, sql
    _q(root, f"GRANT ALTER_PRIV ON {db}.p TO '{u}'@'%'")
    _q(conn, f"ALTER TABLE {db}.p ADD TEMPORARY PARTITION tp VALUES LESS THAN (10)")
    assert _q(root, f"SHOW TEMPORARY PARTITIONS FROM {db}.p")[0][1] == "tp"
    conn.close()
    _q(root, f"DROP USER '{u}'@'%'")
    _q(root, f"DROP DATABASE {db}")


def test_a_query_text_another_user_passed_is_still_checked(server):
    """server/privileges.py remembers query texts that passed per user identity, database and
    catalog epoch: the same text is refused to a user without the grant, and to the first user
    once the grant is revoked."""
    root = server.connect()
    reader, other, db = unique_name("rd"), unique_name("ot"), unique_name("pdb")
    _q(root, f"CREATE DATABASE {db}")
    _q(root, f"CREATE TABLE {db}.t (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    _q(root, f"INSERT INTO {db}.t VALUES (1)")
    for u in (reader, other):
        _q(root, f"CREATE USER '{u}'@'%' IDENTIFIED BY 'pw'")
    _q(root, f"GRANT SELECT_PRIV ON {db}.t TO '{reader}'@'%'")
    first, second = _login(server, reader, "pw"), _login(server, other, "pw")
    sql = f"SELECT k FROM {db}.t"
    assert _q(first, sql) == [(1,)] and _q(first, sql) == [(1,)]
    assert _err(second, sql)[0] == 1142
    _q(root, f"REVOKE SELECT_PRIV ON {db}.t FROM '{reader}'@'%'")
    assert _err(first, sql)[0] == 1142
    first.close()
    second.close()
    for u in (reader, other):
        _q(root, f"DROP USER '{u}'@'%'")
    _q(root, f"DROP DATABASE {db}")
