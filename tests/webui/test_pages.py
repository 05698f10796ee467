"""The web UI in a real browser (Playwright driving Debian's chromium): log in (a wrong
password is refused), run SQL in the Playground and read the result table, see an error in
place, cancel a running query, open a profile's operator graph, browse the SHOW PROC tree and
the table browser, watch a Stream Load's progress, kill a session; values from the data are
shown as text, never markup. Each step saves a screenshot (conftest.py: artifacts)."""

from __future__ import annotations

import re

import socket
import threading
import time

import pytest

from webui_support import call, login
from server_process import unique_name

HTML_CELL = "<img src=x onerror=\"window.pwned=1\"><b>bold</b>"


@pytest.fixture(scope="module")
def webdb(server):
    name = unique_name("web")
    conn = server.connect()
    with conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE `{name}`")
        cur.execute(f"USE `{name}`")
        cur.execute("CREATE TABLE t1 (k INT, v VARCHAR(100)) DUPLICATE KEY(k) "
                    "DISTRIBUTED BY HASH(k) BUCKETS 3 PROPERTIES ('replication_num' = '1')")
        cur.execute("INSERT INTO t1 VALUES (1, %s), (2, 'plain'), (3, NULL)", (HTML_CELL,))
        cur.execute("CREATE TABLE t2 (k INT, w INT) DUPLICATE KEY(k) "
                    "DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ('replication_num' = '1')")
        cur.execute("INSERT INTO t2 VALUES (1, 10), (2, 20), (3, 30)")
    yield name
    with conn.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS `{name}`")
    conn.close()


def test_wrong_password_is_refused_then_login_works(page, artifacts):
    page.goto("/Playground")
    page.wait_for_url(lambda url: url.endswith("/login?next=/Playground"))
    page.fill("#username", "root")
    page.fill("#password", "not-the-password")
    with page.expect_response(lambda r: r.url.endswith("/login")) as refused:
        page.click("#login-button")
    assert refused.value.status == 401
    assert "Access denied for user 'root@" in page.inner_text("#login-error")
    assert page.context.cookies() == []  # nothing kept
    page.screenshot(path=str(artifacts / "login-refused.png"))
    page.fill("#password", "")
    page.click("#login-button")
    page.wait_for_url("**/Playground")
    assert page.inner_text("header .who") == "root"


def test_playground_result_table_and_error_in_place(page, webdb, artifacts):
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    login(page)
    page.select_option("#db", webdb)
    page.fill("#sql", "SELECT k, v, '<script>alert(1)</script>' AS `<i>x</i>` FROM t1 ORDER BY k")
    page.click("#run")
    page.wait_for_selector("#result table")
    headers = page.locator("#result th").all_inner_texts()
    assert headers == ["k", "v", "<i>x</i>"]
    rows = [page.locator("#result tbody tr").nth(i).locator("td").all_inner_texts()
            for i in range(3)]
    assert rows == [["1", HTML_CELL, "<script>alert(1)</script>"],
                    ["2", "plain", "<script>alert(1)</script>"],
                    ["3", "NULL", "<script>alert(1)</script>"]]
    assert page.locator("#result img, #result b, #result script, #result i").count() == 0
    assert page.evaluate("window.pwned") is None and dialogs == []
    assert "3 row(s)" in page.inner_text("#status")
    page.screenshot(path=str(artifacts / "playground.png"))
    page.fill("#sql", "SELECT nope FROM t1")
    page.click("#run")
    page.wait_for_selector("#error:not([hidden])")
    assert "Unknown column 'nope'" in page.inner_text("#error")
    assert page.locator("#result table").count() == 0
    page.screenshot(path=str(artifacts / "playground-error.png"))
    page.fill("#sql", "INSERT INTO t2 VALUES (4, 40)")  # the server kept serving
    page.click("#run")
    page.wait_for_function("document.getElementById('status').textContent.startsWith('OK')")
    assert "1 row(s) affected" in page.inner_text("#status")


def test_playground_cancel_stops_a_running_query(page, server, webdb, artifacts):
    conn = server.connect(webdb)
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE big (k BIGINT, v VARCHAR(20)) DUPLICATE KEY(k) "
                    "DISTRIBUTED BY HASH(k) BUCKETS 8 PROPERTIES ('replication_num' = '1')")
    conn.close()
    rows = "".join(f"{i},row {i % 10000}\n" for i in range(320000)).encode()
    reply = call(server, f"/api/{webdb}/big/_stream_load", rows, method="PUT",
                 headers={"column_separator": ",", "Content-Type": "text/plain"})[1]
    assert reply["Status"] == "Success" and reply["NumberLoadedRows"] == 320000
    login(page)
    watcher = page.context.new_page()  # the Progress page, in a second tab, sees it running
    watcher.goto("/Progress")
    page.select_option("#db", webdb)
    # sixty joins of 10 million rows each, one after the other: ten seconds or more even on a
    # quiet machine (ten ran in 2.3 s, done before Cancel could be clicked); KILL stops the
    # statement between two operators
    join = "(SELECT sum(a.k + b.k) FROM big a JOIN big b ON a.v = b.v)"
    page.fill("#sql", "SELECT " + " + ".join([join] * 60))
    page.click("#run")
    running = watcher.locator("#queries tbody tr", has_text="JOIN big b")
    running.wait_for(timeout=10000)
    assert webdb in running.inner_text()
    page.click("#cancel", timeout=5000)
    watcher.screenshot(path=str(artifacts / "progress-query.png"))
    page.wait_for_selector("#error:not([hidden])", timeout=60000)
    assert "Query execution was interrupted" in page.inner_text("#error")
    page.screenshot(path=str(artifacts / "playground-cancelled.png"))


def test_profile_graph(page, server, webdb, artifacts):
    conn = server.connect(webdb)
    with conn.cursor() as cur:
        cur.execute("SET enable_profile = true")
        cur.execute("SELECT t1.k, count(*), '<script>window.pwned=1</script>' FROM t1 "
                    "JOIN t2 ON t1.k = t2.k GROUP BY t1.k")
        cur.fetchall()
        cur.execute('SHOW QUERY PROFILE "/"')
        query_id = cur.fetchall()[0][0]
    conn.close()
    login(page)
    page.goto("/QueryProfile")
    page.click(f"a[href='/QueryProfile/{query_id}']")
    page.wait_for_selector("#profile-graph")
    operators = page.locator("#profile-graph g.operator")
    assert operators.count() >= 5
    titles = page.locator("#profile-graph text.title").all_text_contents()  # (SVG: no innerText)
    assert any("HASH JOIN" in t for t in titles) and any("OlapScanNode" in t for t in titles)
    assert page.locator("#profile-graph g.operator.slowest").count() == 1
    slowest = page.locator("#profile-graph g.operator.slowest").text_content()
    assert "rows: " in slowest and "time: " in slowest and "memory: " in slowest
    assert "window.pwned=1" in page.inner_text("p.sql")  # the SQL is text
    assert page.evaluate("window.pwned") is None
    assert "RowsReturned" in page.inner_text("#profile-text")
    page.screenshot(path=str(artifacts / "query-profile.png"), full_page=True)


def test_system_proc_tree_and_table_browser(page, webdb, artifacts):
    login(page)
    page.click("header nav a:text('System')")
    page.click("table.grid a:text-is('dbs')")
    page.wait_for_url(lambda url: url.endswith("/System?path=/dbs"))
    row = page.locator("table.grid tr", has_text=webdb)
    row.locator("a").first.click()
    page.wait_for_selector("table.grid td:text-is('t1')")
    page.locator("table.grid tr", has=page.locator("td:text-is('t1')")).locator("a").click()
    page.click("table.grid a:text-is('partitions')")
    assert "PartitionId" in page.locator("table.grid th").all_inner_texts()
    assert page.inner_text("#crumbs").count("/") >= 4
    page.screenshot(path=str(artifacts / "system.png"))
    page.goto("/System?path=/dbs/424242")
    assert "Database 424242 does not exist" in page.inner_text("#error-message")
    page.goto(f"/Tables?db={webdb}&table=t1")
    headers = page.locator("table.grid").first.locator("th").all_inner_texts()
    assert "RowCount" in headers and "Size" in headers
    page.screenshot(path=str(artifacts / "tables.png"))


def _slow_stream_load(server, db: str, rows: int, stop: threading.Event) -> None:
    """PUT a CSV with a Content-Length, sent in pieces slowly (the load reads as it arrives)."""
    body = "".join(f"{i},{i}\n" for i in range(rows)).encode()
    auth = "Basic cm9vdDo="  # root:
    head = (f"PUT /api/{db}/t2/_stream_load HTTP/1.1\r\nHost: x\r\nAuthorization: {auth}\r\n"
            f"label: {unique_name('slow')}\r\ncolumn_separator: ,\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    with socket.create_connection((server.host, server.http_port), timeout=60) as s:
        s.sendall(head)
        for i in range(0, len(body), 1 << 18):
            s.sendall(body[i:i + (1 << 18)])
            if not stop.is_set():
                time.sleep(0.15)
        s.recv(65536)


def test_progress_of_a_running_stream_load(page, server, webdb, artifacts):
    login(page)
    page.goto("/Progress")
    stop = threading.Event()
    loader = threading.Thread(target=_slow_stream_load, args=(server, webdb, 600000, stop))
    loader.start()
    try:
        cell = page.locator("#stream_loads tbody tr").first
        cell.wait_for(timeout=20000)
        page.wait_for_function(
            "(() => { const b = document.querySelector('#stream_loads progress');"
            " return b && b.value > 0 && b.value < 100; })()", timeout=20000)
        assert webdb in cell.inner_text()
        page.screenshot(path=str(artifacts / "progress-stream-load.png"))
        seen = call(server, "/api/webui/progress")[1]["data"]["stream_loads"]
        assert seen and 0 < seen[0]["BytesReceived"] <= seen[0]["BytesTotal"]
    finally:
        stop.set()
        loader.join(60)


def test_session_page_kills_a_connection(page, server, webdb, artifacts):
    other = server.connect(webdb)
    with other.cursor() as cur:
        cur.execute("SELECT CONNECTION_ID()")
        other_id = cur.fetchall()[0][0]
    login(page)
    page.goto("/Session")
    row = page.locator(f"#sessions tr[data-connection-id='{other_id}']")
    assert webdb in row.inner_text()
    page.screenshot(path=str(artifacts / "session.png"))
    row.locator("button[data-query='false']").click()
    page.wait_for_function(f"document.getElementById('kill-status').textContent"
                           f" === 'killed {other_id}'")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(int(r[1]) == other_id for r in call(server, "/rest/v1/session")[1]["data"]["rows"]):
        time.sleep(0.1)
    assert not any(int(r[1]) == other_id
                   for r in call(server, "/rest/v1/session")[1]["data"]["rows"])
    other.close()


def test_configuration_logs_and_error_pages(page, artifacts):
    login(page)
    page.goto("/Configuration")
    assert "Frontend configuration" in page.inner_text("main")
    assert page.locator("table.grid td:text-is('enable_profile')").count() == 1
    page.fill("#filter", "qe_max_connection")
    page.screenshot(path=str(artifacts / "configuration.png"))
    page.goto("/Logs?lines=50")
    # the shared server's last 50 lines: any logger's (which ones depends on the tests before)
    assert re.search(r"\d\d:\d\d:\d\d\S* +(INFO|WARNING|ERROR|DEBUG) ", page.inner_text("#log"))
    page.screenshot(path=str(artifacts / "logs.png"))
    response = page.goto("/no/such/page")
    assert response.status == 404 and "no page /no/such/page" in page.inner_text("#error-message")
    assert "Traceback" not in page.content()
    page.goto("/Playground")  # still serving
    assert page.locator("#run").count() == 1


def test_an_account_without_admin_sees_its_own_share(page, server, webdb, artifacts):
    user = unique_name("webu")
    conn = server.connect()
    with conn.cursor() as cur:
        cur.execute(f"CREATE USER '{user}' IDENTIFIED BY 'pw'")
        cur.execute(f"GRANT SELECT_PRIV ON `{webdb}`.t2 TO '{user}'")
    conn.close()
    login(page, user, "pw")
    assert webdb in page.locator("#db option").all_inner_texts()
    page.select_option("#db", webdb)
    page.fill("#sql", "SELECT * FROM t1")
    page.click("#run")
    page.wait_for_selector("#error:not([hidden])")
    assert "denied" in page.inner_text("#error").lower()
    page.goto("/Logs")
    assert "ADMIN" in page.inner_text("#error-message")
    page.goto("/System")
    assert "denied" in page.inner_text("#error-message").lower()
    page.screenshot(path=str(artifacts / "no-admin.png"))
