"""The real `mysql` command-line client (MariaDB's, from Debian's mariadb-client) against the server.

Batch mode (`-B`, `-N`, `-e`) is what scripts and CI jobs use; the interactive session is what a
person sees: the client sends `SELECT @@version_comment LIMIT 1` on connect and prints a banner.
Outside CI these tests are skipped when `mysql` is not installed; in CI (CI set) they must run.
"""

from __future__ import annotations

import os
import pty
import re
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


class Cli:
    """The interactive CLI under a pseudo-terminal: `run(sql)` types a line and returns what the
    client printed up to its next prompt; `quit()` ends it and checks the exit status."""

    def __init__(self, mysql_bin, server, *args: str) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # child: become the interactive client
            os.execv(mysql_bin, [mysql_bin, f"-h{server.host}", f"-P{server.port}", "-uroot",
                                 "--default-character-set=utf8mb4", *args])
        self.banner = _read_until(self.fd, "> ")

    def run(self, line: str) -> str:
        os.write(self.fd, line.encode() + b"\n")
        return _read_until(self.fd, "> ")

    def quit(self) -> None:
        os.write(self.fd, b"quit\n")
        _, status = _wait(self.pid, timeout=10)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status

    def close(self) -> None:
        try:
            os.kill(self.pid, 9)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(self.fd)


@pytest.fixture
def cli_db(server, fresh_db):
    """A database with two tables (one with a default value), as a user's example_db."""
    conn = server.connect(fresh_db)
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE t1 (k INT, v VARCHAR(10) DEFAULT 'x') DUPLICATE KEY(k) "
                    'DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES ("replication_num" = "1")')
        cur.execute("CREATE TABLE t2 (d DATE, n DECIMAL(10, 2)) DUPLICATE KEY(d) "
                    'DISTRIBUTED BY HASH(d) BUCKETS 1 PROPERTIES ("replication_num" = "1")')
        cur.execute("INSERT INTO t1 VALUES (1, 'a'), (2, 'b')")
    conn.close()
    return fresh_db


@pytest.mark.parametrize("rehash", [[], ["-A"]], ids=["auto-rehash", "no-rehash"])
def test_interactive_with_database(mysql_bin, server, cli_db, rehash):
    """`mysql ... example_db`: with auto-rehash the client lists databases and tables and sends
    COM_FIELD_LIST for every table before the first prompt; every statement then works."""
    cli = Cli(mysql_bin, server, *rehash, cli_db)
    try:
        assert "Server version" in cli.banner and "ERROR" not in cli.banner, cli.banner
        assert f"[{cli_db}]>" in cli.banner
        out = cli.run("SELECT k, v FROM t1 ORDER BY k;")
        assert "2 rows in set" in out and "| a " in out, out
        out = cli.run("SELECT nope FROM t1;")
        assert "ERROR 1054" in out and "Unknown column 'nope'" in out, out
        out = cli.run("SHOW TABLES;")  # the session outlived the error
        assert "t1" in out and "t2" in out and "2 rows in set" in out, out
        assert "gone away" not in out
        cli.quit()
    finally:
        cli.close()


def test_interactive_use_database(mysql_bin, server, cli_db):
    """USE typed at the prompt (COM_INIT_DB, then the rehash queries), an unknown database, and
    information_schema (its tables are listed by COM_FIELD_LIST too)."""
    cli = Cli(mysql_bin, server)
    try:
        out = cli.run(f"USE {cli_db};")
        assert "Database changed" in out and "ERROR" not in out, out
        out = cli.run("SELECT count(*) AS n FROM t1;")
        assert re.search(r"\|\s+2 \|", out) and "1 row in set" in out, out
        out = cli.run("USE no_such_db_cli;")
        assert "ERROR 1049" in out, out
        out = cli.run("USE information_schema;")
        assert "Database changed" in out and "ERROR" not in out, out
        out = cli.run(f"SELECT TABLE_NAME FROM tables WHERE TABLE_SCHEMA = '{cli_db}' ORDER BY 1;")
        assert "t1" in out and "t2" in out, out
        cli.quit()
    finally:
        cli.close()


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
