"""The real `mysql` command-line client (MariaDB's, from Debian's mariadb-client) against the server.

Batch mode (`-B`, `-N`, `-e`) is what scripts and CI jobs use; the interactive session is what a
person sees: the client sends `SELECT @@version_comment LIMIT 1` on connect and prints a banner.
Outside CI these tests are skipped when `mysql` is not installed; in CI (CI set) they must run.
"""

from __future__ import annotations

import os
import pty
import select
import shutil
import subprocess
import time

import pytest


@pytest.fixture(scope="module")
def mysql_bin():
    path = shutil.which("mysql")
    if path:
        return path
    if os.environ.get("CI"):
        pytest.fail("the mysql CLI is not on PATH in CI: .ci/run must install mariadb-client")
    pytest.skip("the mysql CLI is not on PATH (apt-get install mariadb-client); required only in CI")


def run_mysql(mysql_bin, server, sql, *flags, db=None, check=True):
    cmd = [mysql_bin, f"-h{server.host}", f"-P{server.port}", "-uroot", "--default-character-set=utf8mb4", *flags]
    if db:
        cmd += ["-D", db]
    cmd += ["-e", sql]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    if check:
        assert proc.returncode == 0, f"mysql exited {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


def test_batch_select_without_headers(mysql_bin, server):
    out = run_mysql(mysql_bin, server, "SELECT 1 AS a, 'x' AS b", "-N", "-B").stdout
    assert out == "1\tx\n"


def test_batch_ddl_insert_select(mysql_bin, server, fresh_db):
    script = (
        "CREATE TABLE cli_t (k INT, city VARCHAR(20), v BIGINT SUM) AGGREGATE KEY(k, city) "
        'DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES ("replication_num" = "1");'
        "INSERT INTO cli_t VALUES (1, '北京', 10), (1, '北京', 5), (2, NULL, 7);"
        "SELECT k, city, v FROM cli_t ORDER BY k;"
    )
    out = run_mysql(mysql_bin, server, script, "-N", "-B", db=fresh_db).stdout
    assert out == "1\t北京\t15\n2\tNULL\t7\n"


def test_batch_with_headers(mysql_bin, server, fresh_db):
    run_mysql(
        mysql_bin, server,
        "CREATE TABLE h (k INT, v VARCHAR(10)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
        'PROPERTIES ("replication_num" = "1"); INSERT INTO h VALUES (1, NULL)',
        db=fresh_db,
    )
    out = run_mysql(mysql_bin, server, "SELECT k, v FROM h", "-B", db=fresh_db).stdout
    assert out == "k\tv\n1\tNULL\n"


def test_batch_error_reports_doris_message(mysql_bin, server):
    proc = run_mysql(mysql_bin, server, "USE nope_cli_db", "-N", "-B", check=False)
    assert proc.returncode == 1
    assert "ERROR 1049" in proc.stderr
    assert "errCode = 2, detailMessage = Unknown database 'nope_cli_db'" in proc.stderr


def test_version_comment_query(mysql_bin, server):
    out = run_mysql(mysql_bin, server, "SELECT @@version_comment LIMIT 1", "-N", "-B").stdout
    assert out.strip(), "@@version_comment returned nothing"


def test_interactive_session(mysql_bin, server):
    """Drive the CLI through a pseudo-terminal as a person would: banner, prompt, a query, quit."""
    pid, fd = pty.fork()
    if pid == 0:  # child: become the interactive client
        os.execv(mysql_bin, [mysql_bin, f"-h{server.host}", f"-P{server.port}", "-uroot", "--default-character-set=utf8mb4"])
    try:
        banner = _read_until(fd, "> ")
        assert "Server version" in banner, banner
        os.write(fd, b"SELECT 40 + 2 AS answer;\n")
        answer = _read_until(fd, "> ")
        assert "answer" in answer and "42" in answer and "1 row in set" in answer, answer
        os.write(fd, b"SELECT DATABASE() AS db;\n")
        assert "1 row in set" in _read_until(fd, "> ")
        os.write(fd, b"quit\n")
        _, status = _wait(pid, timeout=10)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    finally:
        try:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(fd)


def _read_until(fd, marker: str, timeout: float = 20.0) -> str:
    out = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
            if out.decode(errors="replace").rstrip(" ").endswith(marker.rstrip(" ")):
                return out.decode(errors="replace")
    raise AssertionError(f"no {marker!r} prompt within {timeout} s; the client printed:\n{out.decode(errors='replace')}")


def _wait(pid, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return done, status
        time.sleep(0.05)
    raise AssertionError("the mysql client did not exit after `quit`")
