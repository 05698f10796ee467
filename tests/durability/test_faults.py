"""Faults of the machine, not of the client (issue 17 item 5): a full disk, a data directory
that turns read-only, a corrupted page. Each gives the client an error, never corrupts
anything, and the server goes on serving; every acknowledged write is there after a restart.

The data directory is a small tmpfs mounted for the test (the tests run as root, as CI does).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pymysql
import pytest

from server_process import ServerProcess, ServerStartError

DDL = """
CREATE TABLE t (k INT NOT NULL, pad VARCHAR(200))
DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ("replication_num" = "1")
"""
COUNTS = {"faults": 0, "acknowledged": 0}


@pytest.fixture(scope="module", autouse=True)
def report_counts():
    yield
    print(f"\nfault injection: {COUNTS['faults']} faults injected, "
          f"{COUNTS['acknowledged']} acknowledged rows verified")


@pytest.fixture
def tmpfs(tmp_path):
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(mnt)], check=True)
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=False)


@pytest.fixture
def fault_server(tmpfs, tmp_path):
    srv = ServerProcess(tmpfs / "data", log_path=tmp_path / "server.log")
    yield srv
    srv.stop()


def run(conn, sql):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall() if cur.description else cur.rowcount


def batch(first: int, rows: int) -> str:
    """Rows with 180 random hex characters each: they do not compress away."""
    return "INSERT INTO t VALUES " + ", ".join(f"({k}, '{os.urandom(90).hex()}')"
                                               for k in range(first, first + rows))


def test_a_full_disk_fails_the_load_and_keeps_every_acknowledged_row(fault_server):
    srv = fault_server.start()
    conn = srv.connect()
    run(conn, "CREATE DATABASE f")
    run(conn, "USE f")
    run(conn, DDL)
    acknowledged, error = 0, None
    for i in range(400):  # 400 x 2,000 rows of ~190 bytes: far more than 24 MB
        try:
            run(conn, batch(acknowledged, 2000))
        except pymysql.MySQLError as e:
            error = e
            break
        acknowledged += 2000
    assert error is not None, "the tmpfs never filled up"
    COUNTS["faults"] += 1
    assert isinstance(error, (pymysql.err.InternalError, pymysql.err.OperationalError)), error
    assert "No space left on device" in str(error) or "disk" in str(error).lower(), error
    # The server goes on: reads see exactly the acknowledged rows, as does a new session.
    assert run(conn, "SELECT count(*) FROM t")[0][0] == acknowledged
    assert run(srv.connect("f"), "SELECT count(*), count(DISTINCT k) FROM t")[0] == \
        (acknowledged, acknowledged)
    # ... and after a crash.
    srv.kill9()
    srv.start()
    conn = srv.connect("f")
    assert run(conn, "SELECT count(*), min(k), max(k) FROM t")[0] == \
        (acknowledged, 0, acknowledged - 1)
    COUNTS["acknowledged"] += acknowledged
    # Space freed (the table dropped): writable again.
    run(conn, "DROP TABLE t FORCE")
    run(conn, DDL)
    run(conn, batch(0, 10))
    assert run(conn, "SELECT count(*) FROM t")[0][0] == 10


def test_a_read_only_data_dir_is_refused_at_start_and_loses_nothing(fault_server, tmpfs):
    """A read-only data dir (Linux refuses to remount a file system read-only while the server
    has files open for writing, so the fault is met at start-up): the server says so and exits;
    once the directory is writable again, everything is there."""
    srv = fault_server.start()
    conn = srv.connect()
    run(conn, "CREATE DATABASE f")
    run(conn, "USE f")
    run(conn, DDL)
    run(conn, batch(0, 100))
    srv.stop()
    subprocess.run(["mount", "-o", "remount,ro", str(tmpfs)], check=True)
    try:
        COUNTS["faults"] += 1
        with pytest.raises(ServerStartError):
            srv.start(timeout=60)
        assert "Read-only file system" in srv.log_tail(), srv.log_tail()
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(tmpfs)], check=True)
    srv.start()
    conn = srv.connect("f")
    assert run(conn, "SELECT count(*) FROM t")[0][0] == 100
    run(conn, batch(100, 100))
    srv.kill9()
    srv.start()
    assert run(srv.connect("f"), "SELECT count(*) FROM t")[0][0] == 200
    COUNTS["acknowledged"] += 200


def test_a_corrupted_page_is_reported_with_its_tablet(fault_server):
    srv = fault_server.start()
    conn = srv.connect()
    run(conn, "CREATE DATABASE f")
    run(conn, "USE f")
    run(conn, DDL)
    run(conn, batch(0, 5000))
    tablets = run(conn, "SHOW TABLETS FROM t")
    srv.stop()
    segments = sorted(p for p in Path(srv.data_dir).rglob("*.dat"))
    assert segments, list(Path(srv.data_dir).rglob("*"))
    victim = segments[0]
    data = bytearray(victim.read_bytes())
    data[len(data) // 3] ^= 0xFF  # inside the data pages (the footer is at the end)
    victim.write_bytes(bytes(data))
    COUNTS["faults"] += 1
    srv.start()
    conn = srv.connect("f")
    with pytest.raises(pymysql.MySQLError) as err:
        run(conn, "SELECT sum(length(pad)) FROM t")
    tablet_ids = {str(r[0]) for r in tablets}
    assert "checksum" in str(err.value).lower() or "corrupt" in str(err.value).lower(), err.value
    assert any(t in str(err.value) for t in tablet_ids), (err.value, tablet_ids)
    assert srv.running
    assert run(conn, "SELECT 1")[0][0] == 1
