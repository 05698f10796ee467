"""A read-only cursor of a prepared statement (COM_STMT_EXECUTE with CURSOR_TYPE_READ_ONLY, then
COM_STMT_FETCH of a few rows at a time) returns every row once, in order, and ends with
SERVER_STATUS_LAST_ROW_SENT. Spoken at the packet level over a PyMySQL connection (no Python
driver here opens server cursors)."""

from __future__ import annotations

import struct

from pymysql.constants import COMMAND

from tests.server_process import connect

LAST_ROW_SENT = 0x80


def _packets_until_eof(conn) -> tuple[list[bytes], int]:
    """Packets up to an EOF/OK terminator; returns (packets, status flags)."""
    rows = []
    while True:
        packet = conn._read_packet()  # noqa: SLF001 - packet-level test
        data = packet.get_all_data()
        if data[0] == 0xFE and len(data) < 0xFFFFFF:  # EOF (or OK with 0xFE header)
            if len(data) <= 5:
                return rows, struct.unpack_from("<H", data, 3)[0]
            return rows, _ok_status(data)
        rows.append(data)


def _ok_status(data: bytes) -> int:
    pos = 1
    for _ in range(2):  # affected rows, last insert id: length-encoded
        pos += {0xFC: 3, 0xFD: 4, 0xFE: 9}.get(data[pos], 1)
    return struct.unpack_from("<H", data, pos)[0]


def test_cursor_fetch_returns_every_row_once(server, fresh_db):
    conn = connect(server.host, server.port, fresh_db)
    try:
        with conn.cursor() as cur:
            cur.execute("CREATE TABLE f (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
                        "PROPERTIES ('replication_num' = '1')")
            cur.execute("INSERT INTO f VALUES " + ",".join(f"({i})" for i in range(7)))
        conn._execute_command(COMMAND.COM_STMT_PREPARE, "SELECT k FROM f ORDER BY k")  # noqa: SLF001
        ok = conn._read_packet().get_all_data()  # noqa: SLF001
        stmt_id, columns, params = struct.unpack_from("<IHH", ok, 1)
        for count in (params, columns):  # definitions, each list ended by an EOF
            if count:
                _packets_until_eof(conn)
        conn._execute_command(COMMAND.COM_STMT_EXECUTE,  # noqa: SLF001
                              struct.pack("<IBI", stmt_id, 1, 1))  # CURSOR_TYPE_READ_ONLY
        conn._read_packet()  # column count  # noqa: SLF001
        _packets_until_eof(conn)  # column definition(s), then the execute's terminator
        got, status = [], 0
        for _ in range(10):
            conn._execute_command(COMMAND.COM_STMT_FETCH, struct.pack("<II", stmt_id, 3))  # noqa: SLF001
            rows, status = _packets_until_eof(conn)
            got += [struct.unpack_from("<i", r, 2)[0] for r in rows]  # 0x00, bitmap, INT
            if status & LAST_ROW_SENT:
                break
        assert got == list(range(7))
        assert status & LAST_ROW_SENT
    finally:
        conn.close()
