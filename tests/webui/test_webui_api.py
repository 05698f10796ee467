"""The web UI's JSON endpoints and login over plain HTTP: every endpoint needs an account, a
wrong password is 401 and creates nothing, a login cookie needs its CSRF token to change
anything and ends when the account's password changes, privileges are the account's, the log
viewer reads only its own tail, and hostile paths, parameters and bodies get clear errors
(never a 500) while the server keeps serving."""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest

from server_process import unique_name
from webui_support import call

JSON_GETS = ["/rest/v1/system?path=/", "/rest/v1/query_profile", "/rest/v1/session",
             "/rest/v1/log", "/api/webui/progress"]
JSON_POSTS = ["/api/webui/query", "/api/webui/cancel", "/api/webui/kill"]


@pytest.fixture(scope="module")
def account(server):
    """A user without ADMIN, with SELECT on one table of its database."""
    db, user = unique_name("webapi"), unique_name("wu")
    conn = server.connect()
    with conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE `{db}`")
        cur.execute(f"USE `{db}`")
        cur.execute(f"CREATE TABLE `{db}`.t (k INT, v VARCHAR(40)) DUPLICATE KEY(k) "
                    "DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ('replication_num' = '1')")
        cur.execute(f"CREATE TABLE `{db}`.secret (k INT) DUPLICATE KEY(k) "
                    "DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES ('replication_num' = '1')")
        cur.execute(f"INSERT INTO `{db}`.t VALUES " +
                    ", ".join(f"({i}, '<td>{i}')" for i in range(1500)))
        cur.execute(f"CREATE USER '{user}' IDENTIFIED BY 'pw'")
        cur.execute(f"GRANT SELECT_PRIV ON `{db}`.t TO '{user}'")
    yield db, user
    with conn.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS `{db}`")
        cur.execute(f"DROP USER IF EXISTS '{user}'")
    conn.close()


@pytest.mark.parametrize("path", JSON_GETS + JSON_POSTS)
def test_every_endpoint_needs_an_account(server, path):
    body = {} if path in JSON_POSTS else None
    status, reply, headers = call(server, path, body, auth=None)
    assert status == 401 and reply["code"] == 401
    status, reply, _ = call(server, path, body, auth="root:wrong")
    assert status == 401 and "Access denied for user 'root@" in reply["msg"]


def test_pages_send_a_browser_to_the_login_form(server):
    status, _, headers = call(server, "/System?path=/dbs", auth=None)
    assert status == 303 and headers["Location"] == "/login?next=/System%3Fpath%3D/dbs"
    status, text, headers = call(server, "/Playground", auth="root:wrong")
    assert status == 401 and "Access denied" in text and "WWW-Authenticate" in headers


def _login(server, user: str, password: str, next_path: str = "/Playground"):
    form = f"username={quote(user)}&password={quote(password)}&next={quote(next_path)}"
    return call(server, "/login", form.encode(), auth=None,
                headers={"Content-Type": "application/x-www-form-urlencoded"})


def _cookie_and_csrf(server, user="root", password=""):
    status, _, headers = _login(server, user, password)
    assert status == 303
    cookie = headers["Set-Cookie"].split(";")[0]
    page = call(server, "/Playground", auth=None, headers={"Cookie": cookie})[1]
    csrf = re.search(r'name="csrf-token" content="([^"]+)"', page).group(1)
    return cookie, csrf


def test_login_cookie_csrf_and_logout(server, account):
    db, user = account
    status, text, headers = _login(server, user, "wrong")
    assert status == 401 and "Set-Cookie" not in headers and "Access denied" in text
    status, _, headers = _login(server, user, "pw", "//evil.example/x")
    assert status == 303 and headers["Location"] == "/Playground"  # never off-site
    cookie = headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    cookie, csrf = _cookie_and_csrf(server, user, "pw")
    query = {"stmt": "SELECT count(*) FROM t", "db": db}
    status, reply, _ = call(server, "/api/webui/query", query, auth=None,
                            headers={"Cookie": cookie})
    assert status == 401 and "X-CSRF-Token" in reply["msg"]  # no token: refused
    status, reply, _ = call(server, "/api/webui/query", query, auth=None,
                            headers={"Cookie": cookie, "X-CSRF-Token": csrf})
    assert reply["data"]["rows"] == [[1500]]
    status, _, _ = call(server, "/logout", b"", auth=None,
                        headers={"Cookie": cookie, "X-CSRF-Token": csrf})
    assert status == 303
    assert call(server, "/rest/v1/session", auth=None, headers={"Cookie": cookie})[0] == 401


def test_a_password_change_ends_the_login(server, account):
    _, user = account
    cookie, _ = _cookie_and_csrf(server, user, "pw")
    assert call(server, "/rest/v1/session", auth=None, headers={"Cookie": cookie})[0] == 200
    conn = server.connect()
    with conn.cursor() as cur:
        cur.execute(f"SET PASSWORD FOR '{user}' = PASSWORD('pw2')")
        try:
            assert call(server, "/rest/v1/session", auth=None,
                        headers={"Cookie": cookie})[0] == 401
        finally:
            cur.execute(f"SET PASSWORD FOR '{user}' = PASSWORD('pw')")
    conn.close()
    assert call(server, "/rest/v1/session", auth=None, headers={"Cookie": cookie})[0] == 401


def test_playground_query_endpoint(server, account):
    db, user = account
    reply = call(server, "/api/webui/query", {"stmt": "SELECT k, v FROM t ORDER BY k",
                                              "db": db})[1]["data"]
    assert reply["type"] == "result_set" and reply["columns"] == ["k", "v"]
    assert reply["total"] == 1500 and len(reply["rows"]) == 1000 and reply["truncated"]
    assert reply["rows"][0] == [0, "<td>0"]
    reply = call(server, "/api/webui/query", {"stmt": "SELECT nope FROM t", "db": db})[1]
    assert "Unknown column 'nope'" in reply["data"]["error"]
    reply = call(server, "/api/webui/query", b"not json")[1]
    assert "stmt" in reply["data"]["error"]
    reply = call(server, "/api/webui/query", {"stmt": "SELECT * FROM secret", "db": db},
                 auth=f"{user}:pw")[1]
    assert "denied" in reply["data"]["error"].lower()
    reply = call(server, "/api/webui/query", {"stmt": "INSERT INTO t VALUES (9999, 'x')",
                                              "db": db}, auth=f"{user}:pw")[1]
    assert "denied" in reply["data"]["error"].lower()  # SELECT only: nothing written
    assert call(server, "/api/webui/query", {"stmt": "SELECT count(*) FROM t", "db": db}
                )[1]["data"]["rows"] == [[1500]]
    reply = call(server, "/api/webui/query", {"stmt": "SELECT 1", "db": "no_such_db"})[1]
    assert "Unknown database 'no_such_db'" in reply["data"]["error"]
    hidden = unique_name("hidden")
    call(server, "/api/webui/query", {"stmt": f"CREATE DATABASE {hidden}"})
    reply = call(server, "/api/webui/query", {"stmt": "SHOW TABLES", "db": hidden},
                 auth=f"{user}:pw")[1]
    assert f"Access denied for user '{user}' to database '{hidden}'" in reply["data"]["error"]
    call(server, "/api/webui/query", {"stmt": f"DROP DATABASE {hidden}"})
    reply = call(server, "/api/webui/kill", {"connection_id": 987654321})[1]
    assert reply["code"] == 1 and "Unknown thread id: 987654321" in reply["msg"]


def test_system_profiles_and_logs_follow_privileges(server, account):
    db, user = account
    reply = call(server, "/rest/v1/system?path=/dbs")[1]["data"]
    row = next(r for r in reply["rows"] if r[1] == db)
    assert reply["links"][reply["rows"].index(row)] == f"/dbs/{row[0]}"
    reply = call(server, "/rest/v1/system?path=/dbs", auth=f"{user}:pw")[1]
    assert reply["code"] == 1 and "denied" in reply["msg"].lower()
    status, reply, _ = call(server, "/rest/v1/log", auth=f"{user}:pw")
    assert status == 403 and "ADMIN" in reply["msg"]
    for lines in ("../../etc/passwd", "-5", "1e9", "%00"):
        status, reply, _ = call(server, f"/rest/v1/log?lines={quote(lines)}")
        assert status == 200 and len(reply["data"]["lines"]) <= 200
        assert not any("root:x:0:0" in line for line in reply["data"]["lines"])
    assert len(call(server, "/rest/v1/log?lines=3")[1]["data"]["lines"]) == 3
    for auth in ("root:", f"{user}:pw"):  # one profiled query each
        call(server, "/api/webui/query", {"stmt": "SET enable_profile = true", "db": db},
             auth=auth)
    cookie, csrf = _cookie_and_csrf(server, user, "pw")
    for stmt in ("SET enable_profile = true", "SELECT count(*) FROM t"):
        call(server, "/api/webui/query", {"stmt": stmt, "db": db}, auth=None,
             headers={"Cookie": cookie, "X-CSRF-Token": csrf})
    mine = call(server, "/rest/v1/query_profile", auth=f"{user}:pw")[1]["data"]["rows"]
    assert mine and {r[1] for r in mine} == {user}
    query_id = mine[0][0]
    reply = call(server, f"/rest/v1/query_profile/{query_id}")[1]["data"]  # root: ADMIN
    assert reply["operators"]["children"] and reply["slowest"] is not None


def test_static_files_headers_and_hostile_input(server):
    status, text, headers = call(server, "/static/webui.js")
    assert status == 200 and "textContent" in text
    status, _, headers = call(server, "/Playground")
    assert headers["X-Frame-Options"] == "DENY" and "default-src 'self'" in \
        headers["Content-Security-Policy"]
    hostile = ["/static/../pyproject.toml", "/static/webui.css/../../server/main.py",
               "/System?path=" + quote("/../../etc/passwd"), "/System?path=" + quote("'; DROP"),
               "/QueryProfile/" + "f" * 5000, "/Tables?db=" + quote("`; DROP DATABASE x; --"),
               "/Tables?db=x&table=" + quote("<script>"), "/Logs?lines=" + "9" * 400,
               "/rest/v1/system?path=%ff%fe", "/Session?x=%00"]
    for path in hostile:
        status, body, _ = call(server, path, headers={"Accept": "text/html"})
        assert status in (200, 400, 403, 404), (path, status)
        assert "Traceback" not in str(body) and "root:x:0:0" not in str(body)
        assert "<script>" not in str(body).replace("&lt;script&gt;", ""), path
    for body in (b"\xff\xfe", b"[1, 2]", b'{"stmt": 5}', b'{"connection_id": "1; x"}',
                 b"x" * 100000):
        for path in JSON_POSTS:
            status, reply, _ = call(server, path, body)
            assert status == 200 and reply["code"] in (0, 1), (path, body[:20], reply)
    assert call(server, "/api/webui/query", b"x" * (2 << 20))[0] == 413
    assert call(server, "/api/health")[0] == 200  # still serving


def test_kill_of_another_users_connection_needs_admin(server, account):
    _, user = account
    conn = server.connect()
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT CONNECTION_ID()")
            root_id = cur.fetchall()[0][0]
        reply = call(server, "/api/webui/kill", {"connection_id": root_id, "query": False},
                     auth=f"{user}:pw")[1]
        assert reply["code"] == 1 and f"You are not owner of thread or query: {root_id}" in reply["msg"]
        with conn.cursor() as cur:  # still open
            cur.execute("SELECT 1")
            assert cur.fetchall() == ((1,),)
    finally:
        conn.close()
