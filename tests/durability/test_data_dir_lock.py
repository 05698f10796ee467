"""One server per data dir: a second server on a held data dir refuses to start, touching
nothing; the lock dies with its holder, even by kill -9."""

from __future__ import annotations

import subprocess
import sys

from server_process import free_port


def _second_server(data_dir) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "server", "serve", "--port", str(free_port()), "--http-port", "0",
         "--data-dir", str(data_dir)], capture_output=True, text=True, timeout=60)


def test_second_server_on_a_held_data_dir_exits(server_factory):
    srv = server_factory().start()
    conn = srv.connect()
    with conn.cursor() as cur:
        cur.execute("CREATE DATABASE held_db")
    journal = sorted(p.stat().st_size for p in srv.data_dir.rglob("*") if p.is_file())

    second = _second_server(srv.data_dir)
    assert second.returncode == 1
    assert f"data dir {srv.data_dir} is in use by another minidoris process" in second.stderr
    assert f"pid {srv.proc.pid}" in second.stderr
    # the first server was not disturbed, and nothing in the dir changed
    assert sorted(p.stat().st_size for p in srv.data_dir.rglob("*") if p.is_file()) == journal
    with conn.cursor() as cur:
        cur.execute("SHOW DATABASES LIKE 'held_db'")
        assert cur.fetchall() == (("held_db",),)

    srv.kill9()  # the kernel drops the lock with the process
    srv.start()
    with srv.connect().cursor() as cur:
        cur.execute("SHOW DATABASES LIKE 'held_db'")
        assert cur.fetchall() == (("held_db",),)
