"""A client that goes away in the middle of a load (issue 19 item 3): nothing partial becomes
visible, every read sees all of the load or none of it, and the server takes the next load as
if nothing had happened (a Stream Load's label is not used up by a load that never finished)."""

from __future__ import annotations

import base64
import socket
import struct
import time

from tests.concurrency.test_compaction_wire import query

ROWS = 400_000


def _table(conn, db: str, name: str) -> None:
    query(conn, f"CREATE DATABASE IF NOT EXISTS {db}")
    query(conn, f"USE {db}")
    query(conn, f"CREATE TABLE {name} (k BIGINT NOT NULL, v BIGINT, s VARCHAR(40)) "
                "DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 4 "
                "PROPERTIES ('replication_num' = '1')")


def test_insert_select_whose_client_disconnects_is_all_or_nothing(server_factory):
    srv = server_factory().start()
    conn = srv.connect()
    _table(conn, "dis", "src")
    _table(conn, "dis", "dst")
    query(conn, f"INSERT INTO src SELECT number, number * 3, concat('row-', number) "
                f"FROM numbers('number' = '{ROWS}')")
    client = srv.connect("dis")
    sock = client._sock  # pymysql's socket, after the handshake
    payload = b"\x03" + b"INSERT INTO dst SELECT k, v, s FROM src"
    sock.sendall(struct.pack("<I", len(payload))[:3] + b"\x00" + payload)
    time.sleep(0.05)
    sock.close()  # gone before its OK packet
    del client
    deadline = time.monotonic() + 120
    while True:  # every read: all of the load or none of it, until the statement has ended
        running = any("INSERT INTO dst" in str(row[11])
                      for row in query(conn, "SHOW PROCESSLIST"))
        (count, total), = query(conn, "SELECT count(*), coalesce(sum(v), 0) FROM dst")
        assert (count, total) in ((0, 0), (ROWS, 3 * ROWS * (ROWS - 1) // 2)), (count, total)
        if not running:
            break
        assert time.monotonic() < deadline, "the dropped client's INSERT never ended"
        time.sleep(0.05)
    # the statement was received whole: it finished (as Doris finishes it), or it left nothing
    final = query(conn, "SELECT count(*) FROM dst")[0][0]
    assert final in (0, ROWS)
    query(conn, "INSERT INTO dst SELECT k, v, s FROM src WHERE k < 10")
    assert query(conn, "SELECT count(*) FROM dst")[0][0] == final + 10
    conn.close()


def _stream_load_request(srv, db: str, table: str, label: str, body_length: int) -> bytes:
    auth = base64.b64encode(b"root:").decode()
    return (f"PUT /api/{db}/{table}/_stream_load HTTP/1.1\r\n"
            f"Host: {srv.host}:{srv.http_port}\r\n"
            f"Authorization: Basic {auth}\r\n"
            f"label: {label}\r\ncolumn_separator: ,\r\n"
            f"Content-Length: {body_length}\r\n\r\n").encode()


def _rows(n: int) -> bytes:
    return "".join(f"{i},{i * 3},row-{i}\n" for i in range(n)).encode()


def test_stream_load_whose_client_disconnects_mid_body_publishes_nothing(server_factory):
    srv = server_factory().start()
    conn = srv.connect()
    _table(conn, "dis", "t")
    body = _rows(ROWS)
    with socket.create_connection((srv.host, srv.http_port), timeout=30) as s:
        s.sendall(_stream_load_request(srv, "dis", "t", "dropped", len(body)))
        s.sendall(body[: len(body) // 2])  # half the rows, then the client is gone
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:  # the server notices the short body
        assert query(conn, "SELECT count(*) FROM t") == ((0,),)
        time.sleep(0.1)
    # the label was not used up: the same load, sent whole, goes in once
    with socket.create_connection((srv.host, srv.http_port), timeout=60) as s:
        s.sendall(_stream_load_request(srv, "dis", "t", "dropped", len(body)) + body)
        s.shutdown(socket.SHUT_WR)
        reply = b""
        while chunk := s.recv(65536):
            reply += chunk
    assert b'"Status": "Success"' in reply or b'"Status":"Success"' in reply, reply[-600:]
    assert query(conn, "SELECT count(*), sum(v) FROM t") == \
        ((ROWS, 3 * ROWS * (ROWS - 1) // 2),)
    conn.close()
