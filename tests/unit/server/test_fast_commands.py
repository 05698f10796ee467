"""server/protocol/fast_commands.py: key lookups and COM_STMT_RESET answered in the socket's
data callback give what the connection's task gives, the task never runs for them, and
everything else (another statement, a packet split across reads, two packets in one read)
still goes through the task, in order, with the short circuit asked once per command.

An in-process server (DorisServer on the test's services, its event loop in a thread) and
real clients (mysql-connector's prepared cursor, PyMySQL, a raw socket for the packets)."""

from __future__ import annotations

import asyncio
import socket
import struct
import threading
import time

import mysql.connector
import pymysql
import pytest

from server.main import DorisServer
from server.protocol.connection import DorisConnection
from server.protocol.fast_commands import CommandReader
from server.session import DorisSession
from session_testutil import run


@pytest.fixture(scope="module")
def served(services):
    s = DorisSession(services)
    run(s, "CREATE DATABASE IF NOT EXISTS fc")
    s.database = "fc"
    run(s, "DROP TABLE IF EXISTS c")
    run(s, "CREATE TABLE c (k INT, name VARCHAR(20), v DOUBLE) DUPLICATE KEY(k) "
           "DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ('replication_num' = '1')")
    run(s, "INSERT INTO c VALUES " + ", ".join(f"({i}, 'n{i}', {i / 4})" for i in range(1, 201)))
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    server = DorisServer(services)
    asyncio.run_coroutine_threadsafe(server.start_server(host="127.0.0.1", port=0),
                                     loop).result(10)
    port = server._server.sockets[0].getsockname()[1]  # noqa: SLF001
    yield port
    loop.call_soon_threadsafe(server._server.close)  # noqa: SLF001
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)


@pytest.fixture
def calls(monkeypatch):
    """How often the connection's task handled each command, and the short circuit ran."""
    counts = {"query": 0, "execute": 0, "reset": 0, "short": 0}

    def counting(name, original):
        async def handler(self, data):
            counts[name] += 1
            return await original(self, data)
        return handler

    for name, attr in (("query", "handle_query"), ("execute", "handle_stmt_execute"),
                       ("reset", "handle_stmt_reset")):
        monkeypatch.setattr(DorisConnection, attr, counting(name, getattr(DorisConnection, attr)))
    original = DorisSession.short_circuit_prepared

    def short(self, stmt, values):
        counts["short"] += 1
        return original(self, stmt, values)

    monkeypatch.setattr(DorisSession, "short_circuit_prepared", short)
    return counts


def test_prepared_lookups_answered_in_the_callback(served, calls):
    conn = mysql.connector.connect(host="127.0.0.1", port=served, user="root", database="fc",
                                   use_pure=True, autocommit=True)
    try:
        cur = conn.cursor(prepared=True)
        for k in (1, 77, 200, 999):
            cur.execute("SELECT k, name, v FROM c WHERE k = %s", (k,))
            assert cur.fetchall() == ([(k, f"n{k}", k / 4)] if k <= 200 else [])
        assert calls["execute"] == 0 and calls["reset"] == 0  # the task never ran them
        assert calls["short"] == 4
        # not a key lookup: the task runs it, and the short circuit is not asked twice
        cur.execute("SELECT count(*), sum(v) FROM c WHERE k <= %s", (100,))
        assert cur.fetchall() == [(100, sum(i / 4 for i in range(1, 101)))]
        assert calls["execute"] == 1 and calls["short"] == 5
    finally:
        conn.close()


def test_text_lookups_answered_in_the_callback(served, calls):
    conn = pymysql.connect(host="127.0.0.1", port=served, user="root", database="fc",
                           autocommit=True)
    before = calls["query"]  # PyMySQL's own statements at connect (SET AUTOCOMMIT)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT name FROM c WHERE k = 42")
            assert cur.fetchall() == (("n42",),)
            assert calls["query"] == before
            cur.execute("SELECT count(*) FROM c")
            assert cur.fetchall() == ((200,),)
            assert calls["query"] == before + 1
            cur.execute("SELECT name FROM c WHERE k = 43")  # the connection still answers
            assert cur.fetchall() == (("n43",),)
            assert calls["query"] == before + 1
    finally:
        conn.close()


def _packet(command: int, body: bytes, seq: int = 0) -> bytes:
    payload = bytes([command]) + body
    return struct.pack("<I", len(payload))[:3] + bytes([seq]) + payload


def _read_result(conn) -> tuple:
    conn._next_seq_id = 1  # noqa: SLF001 - each reply starts at sequence 1
    conn._read_query_result()  # noqa: SLF001
    return conn._result.rows  # noqa: SLF001


def test_pipelined_and_split_packets_go_through_the_task(served, calls):
    conn = pymysql.connect(host="127.0.0.1", port=served, user="root", database="fc",
                           autocommit=True)
    before = calls["query"]
    try:
        sock: socket.socket = conn._sock  # noqa: SLF001
        # two commands in one write: answered in order by the task
        sock.sendall(_packet(3, b"SELECT name FROM c WHERE k = 5") +
                     _packet(3, b"SELECT name FROM c WHERE k = 6"))
        assert _read_result(conn) == (("n5",),)
        assert _read_result(conn) == (("n6",),)
        # one command in two writes: the first read holds a part of it
        whole = _packet(3, b"SELECT name FROM c WHERE k = 7")
        sock.sendall(whole[:6])
        time.sleep(0.2)
        sock.sendall(whole[6:])
        assert _read_result(conn) == (("n7",),)
        assert calls["query"] >= before + 2  # the split one and at least one of the pair
        # and the connection is in step afterwards
        with conn.cursor() as cur:
            cur.execute("SELECT v FROM c WHERE k = 8")
            assert cur.fetchall() == ((2.0,),)
    finally:
        conn.close()


def test_errors_of_declined_commands_reach_the_client(served, calls):
    conn = mysql.connector.connect(host="127.0.0.1", port=served, user="root", database="fc",
                                   use_pure=True, autocommit=True)
    try:
        cur = conn.cursor(prepared=True)
        cur.execute("SELECT k FROM c WHERE k = %s", (3,))
        assert cur.fetchall() == [(3,)]
        with pytest.raises(mysql.connector.Error) as err:  # an unknown statement id
            conn.cmd_stmt_reset(987654)
        assert err.value.errno != 0
        plain = conn.cursor()
        plain.execute("SELECT name FROM c WHERE k = 9")
        assert plain.fetchall() == [("n9",)]
    finally:
        conn.close()


def test_reader_offers_only_whole_commands_while_idle():
    loop = asyncio.new_event_loop()
    try:
        reader = CommandReader(loop=loop)
        offered: list[bytes] = []
        reader.answer = lambda data: offered.append(data) or data == b"yes"
        reader.feed_data(b"yes")  # not idle: not offered
        assert offered == [] and bytes(reader._buffer) == b"yes"  # noqa: SLF001
        reader._buffer.clear()  # noqa: SLF001
        reader.idle = True
        reader.feed_data(b"yes")  # answered: consumed
        assert offered == [b"yes"] and not reader._buffer  # noqa: SLF001
        reader.feed_data(b"no")  # declined: buffered for the task
        assert bytes(reader._buffer) == b"no"  # noqa: SLF001
        reader.feed_data(b"yes")  # a part already waits: in order, not offered
        assert offered == [b"yes", b"no"] and bytes(reader._buffer) == b"noyes"  # noqa: SLF001
    finally:
        loop.close()


def test_polling_selector_returns_events_and_honours_timeouts():
    from server.protocol.fast_commands import PollingSelector
    import selectors
    a, b = socket.socketpair()
    sel = PollingSelector()
    try:
        sel.register(a, selectors.EVENT_READ)
        sel.poll_until = time.monotonic() + 0.05
        threading.Timer(0.01, lambda: b.send(b"x")).start()
        began = time.monotonic()
        ready = sel.select(None)  # polls, and the byte arrives while it does
        assert [key.fileobj for key, _ in ready] == [a] and time.monotonic() - began < 0.05
        assert sel.poll_until == 0.0  # one moment of polling per answered command
        a.recv(1)
        sel.poll_until = time.monotonic() + 1.0
        began = time.monotonic()
        assert sel.select(0.02) == []  # the wait's own timeout bounds the polling
        assert 0.015 < time.monotonic() - began < 0.5
        began = time.monotonic()
        assert sel.select(0.02) == []  # without poll_until: a plain wait
        assert time.monotonic() - began >= 0.015
    finally:
        sel.close()
        a.close()
        b.close()


def test_polling_only_while_no_statement_holds_a_slot(monkeypatch):
    from server.protocol import fast_commands
    from storage import cpu_slots
    sel = fast_commands.PollingSelector()
    monkeypatch.setattr(fast_commands, "_SELECTOR", sel)
    monkeypatch.setattr(cpu_slots, "_LANES", dict(cpu_slots._LANES))
    try:
        cpu_slots.configure(2, 1)
        fast_commands.keep_polling()
        assert sel.poll_until > 0
        sel.poll_until = 0.0
        done, started = threading.Event(), threading.Event()

        def statement():
            with cpu_slots.slot():
                started.set()
                done.wait(5)

        worker = threading.Thread(target=statement)
        worker.start()
        started.wait(5)
        fast_commands.keep_polling()  # a statement runs: the loop sleeps as usual
        assert sel.poll_until == 0.0
        done.set()
        worker.join(5)
        fast_commands.keep_polling()
        assert sel.poll_until > 0
    finally:
        sel.close()
