"""Each index proves itself through the wire: SET enable_profile = true, run a selective query,
read its counters back with SHOW QUERY PROFILE "/<query_id>".

One table of 60,000 rows in one bucket (one segment, pages of 64 KiB): `k` is the sorted key
(short key index), `z` follows `k` (zone maps), `u` is random (only its bloom filter can prune)
and `c` is 'a' or 'z' except for a few 'm' rows (zone maps see 'a'..'z' on every page; only the
bitmap index finds the 'm' rows).
"""

from __future__ import annotations

import random
import re

import pytest

ROWS = 60_000
RARE = [123, 20_000, 45_678]


def _run(conn, sql):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall() if cur.description else cur.rowcount


@pytest.fixture(scope="module")
def table(server):
    conn = server.connect()
    db = "scan_profile_db"
    _run(conn, f"DROP DATABASE IF EXISTS {db}")
    _run(conn, f"CREATE DATABASE {db}")
    _run(conn, f"USE {db}")
    _run(conn, """CREATE TABLE t (k INT NOT NULL, z INT, u BIGINT, c VARCHAR(4),
                    INDEX idx_c (c) USING BITMAP)
                  DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1
                  PROPERTIES ("replication_num" = "1", "bloom_filter_columns" = "u")""")
    rng = random.Random(42)
    us = [rng.randrange(1 << 40) for _ in range(ROWS)]
    rows = ", ".join(f"({k}, {k}, {us[k]}, '{'m' if k in RARE else 'az'[k % 2]}')"
                     for k in range(ROWS))
    _run(conn, f"INSERT INTO t VALUES {rows}")
    _run(conn, "SET enable_profile = true")
    yield conn, us
    _run(conn, f"DROP DATABASE IF EXISTS {db}")
    conn.close()


def profiled(conn, sql: str) -> tuple[list, dict[str, int]]:
    """The query's rows and the counters of its profile (minidoris names)."""
    rows = _run(conn, sql)
    listed = _run(conn, 'SHOW QUERY PROFILE "/"')
    query_id = next(r[0] for r in listed if r[3] == sql)
    (text,), = _run(conn, f'SHOW QUERY PROFILE "/{query_id}"')
    counters: dict[str, int] = {}
    for name, value in re.findall(r"- (\w+): (\d+)$", text, flags=re.M):
        counters.setdefault(name, int(value))
    return list(rows), counters


def test_short_key_index(table):
    conn, _ = table
    rows, c = profiled(conn, "SELECT z FROM t WHERE k = 12345")
    assert rows == [(12345,)]
    assert c["RowsShortKeyFiltered"] >= ROWS - 1024 and c["RowsKeyRangeFiltered"] == \
        c["RowsShortKeyFiltered"]
    assert c["RowsRead"] <= 1024 and c["RowsReturned"] == 1


def test_zone_maps(table):
    conn, _ = table
    rows, c = profiled(conn, "SELECT k FROM t WHERE z >= 30000 AND z < 30005")
    assert [r[0] for r in rows] == list(range(30000, 30005))
    assert c["RowsShortKeyFiltered"] == 0
    assert c["PagesZoneMapFiltered"] >= 2 and c["RowsZoneMapFiltered"] >= ROWS // 2
    assert c["RowsStatsFiltered"] == c["RowsZoneMapFiltered"]


def test_bloom_filter(table):
    conn, us = table
    rows, c = profiled(conn, f"SELECT k FROM t WHERE u = {us[31000]}")
    assert rows == [(31000,)]
    assert c["RowsZoneMapFiltered"] == 0  # random values: every page spans the whole range
    assert c["PagesBloomFilterFiltered"] >= 4 and c["RowsBloomFilterFiltered"] >= ROWS // 2
    rows, c = profiled(conn, f"SELECT k FROM t WHERE u IN ({us[5]}, {us[59000]}, 7)")
    assert sorted(rows) == [(5,), (59000,)] and c["RowsBloomFilterFiltered"] > 0


def test_bitmap_index(table):
    conn, _ = table
    rows, c = profiled(conn, "SELECT k FROM t WHERE c = 'm'")
    assert sorted(r[0] for r in rows) == RARE
    assert c["RowsZoneMapFiltered"] == 0
    assert c["RowsBitmapIndexFiltered"] == ROWS - len(RARE)
    assert c["RowsRead"] == len(RARE) and c["RowsConditionsFiltered"] == 0
    rows, c = profiled(conn, "SELECT count(*) FROM t WHERE c > 'a' AND c < 'z'")
    assert rows == [(len(RARE),)] and c["RowsBitmapIndexFiltered"] == ROWS - len(RARE)


def test_delete_predicates_and_cached_pages(table):
    conn, _ = table
    _run(conn, "DELETE FROM t WHERE z >= 50000 AND c = 'a'")
    rows, c = profiled(conn, "SELECT count(*) FROM t WHERE k >= 40000")
    assert rows == [(ROWS - 40000 - (ROWS - 50000) // 2,)]
    assert c["RowsDelFiltered"] == (ROWS - 50000) // 2
    assert c["CachedPagesNum"] > 0  # index pages loaded by earlier queries stay on the segment


def test_profiles_are_kept_only_when_enabled(server, table):
    conn, _ = table
    other = server.connect("scan_profile_db")
    try:
        _run(other, "SELECT k FROM t WHERE k = 1 AND z = 1")
        listed = _run(other, 'SHOW QUERY PROFILE "/"')
        assert all(r[3] != "SELECT k FROM t WHERE k = 1 AND z = 1" for r in listed)
        assert [len(r) for r in listed[:1]] in ([], [9])
    finally:
        other.close()
    with pytest.raises(Exception, match="does not exist"):
        _run(conn, 'SHOW QUERY PROFILE "/0000000000000000-0000000000000000"')
