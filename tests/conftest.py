"""Shared fixtures: one minidoris server for the whole test session, private servers on demand.

- `server` (session): a server on a free loopback port with a temporary data dir. Yields an object
  with `.host`, `.port`, `.data_dir`, `.connect(db=None)` (PyMySQL, autocommit). Stopped with
  SIGTERM (then SIGKILL) at the end. If it does not start within 20 s, every test that needs it
  fails with the tail of its log. Set MINIDORIS_TEST_SERVER=host:port to test a server you started
  yourself instead.
- `server_factory` (function): makes private `ServerProcess`es in the test's tmp dir (for restart
  and kill -9 tests); all of them are stopped when the test ends.
- `fresh_db` (function): a uniquely named database on the shared server, dropped afterwards.

When a test that used a server fails, the report gets a section with the server log's last lines.
A test that runs longer than MINIDORIS_TEST_TIMEOUT seconds (default 600) makes the whole run
dump every thread's stack and exit non-zero, so a hung server cannot stall CI.
"""

from __future__ import annotations

import faulthandler
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from server_process import (ALL_LOGS, ExternalServer, ServerProcess, ServerStartError,  # noqa: E402
                            tracebacks_in, unique_name)

TEST_TIMEOUT = float(os.environ.get("MINIDORIS_TEST_TIMEOUT", "600"))


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    external = os.environ.get("MINIDORIS_TEST_SERVER")
    if external:
        host, _, port = external.rpartition(":")
        yield ExternalServer(host or "127.0.0.1", int(port))
        return
    base = tmp_path_factory.mktemp("shared-server")
    proc = ServerProcess(base / "data", log_path=base / "server.log")
    try:
        proc.start()
    except ServerStartError as e:
        pytest.fail(str(e), pytrace=False)
    try:
        yield proc
    finally:
        proc.stop()


@pytest.fixture
def server_factory(tmp_path):
    made: list[ServerProcess] = []

    def make(name: str = "data", **kwargs) -> ServerProcess:
        proc = ServerProcess(tmp_path / name, log_path=tmp_path / f"{name}.log", **kwargs)
        made.append(proc)
        return proc

    make.servers = made
    yield make
    for proc in made:
        proc.stop()


@pytest.fixture
def fresh_db(server):
    name = unique_name("t")
    conn = server.connect()
    try:
        with conn.cursor() as cur:
            cur.execute(f"CREATE DATABASE `{name}`")
        yield name
    finally:
        try:
            with conn.cursor() as cur:
                cur.execute(f"DROP DATABASE IF EXISTS `{name}`")
        except Exception:  # cleanup only: the test's own failure is what matters
            pass
        conn.close()


# ---- reporting and time limits --------------------------------------------------------------


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if not rep.failed:
        return
    shown = set()
    for value in getattr(item, "funcargs", {}).values():
        servers = getattr(value, "servers", None) or [value]
        for srv in servers:
            if isinstance(srv, ServerProcess) and id(srv) not in shown:
                shown.add(id(srv))
                rep.sections.append((f"minidoris log {srv.log_path} (last lines)", srv.log_tail(40)))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    faulthandler.dump_traceback_later(TEST_TIMEOUT, exit=True)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


# Tests that kill servers or corrupt files on purpose may log tracebacks: they say so by
# matching one of these texts (a line of the logged traceback).
EXPECTED_TRACEBACKS = ()


def pytest_sessionfinish(session, exitstatus):
    """No internal error anywhere: every server log of the session is scanned for Python
    tracebacks (an exception that reached the connection loop), and any fails the run."""
    found = [(path, tb) for path in dict.fromkeys(ALL_LOGS) for tb in tracebacks_in(path)
             if not any(text in tb for text in EXPECTED_TRACEBACKS)]
    if not found:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    for path, tb in found:
        if reporter is not None:
            reporter.write_line(f"\ninternal error logged by the server ({path}):\n{tb}", red=True)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
