"""SHOW DATA and SHOW TABLETS report the published rowsets: sizes, replica and row counts."""

from __future__ import annotations


def _rows(conn, sql: str) -> list[tuple]:
    with conn.cursor() as cur:
        cur.execute(sql)
        return [tuple(int(v) if isinstance(v, str) and v.isdigit() else v for v in r)
                for r in cur.fetchall()]


def _bytes(text: str) -> float:
    number, _, unit = text.partition(" ")
    return float(number) * {"": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40}[unit]


def test_show_data_and_tablets(server, fresh_db):
    conn = server.connect(fresh_db)
    _rows(conn, "CREATE TABLE a (k INT, v VARCHAR(20)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) "
                "BUCKETS 3 PROPERTIES ('replication_num' = '2')")
    _rows(conn, "CREATE TABLE b (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) "
                "BUCKETS 2 PROPERTIES ('replication_num' = '1')")
    _rows(conn, "INSERT INTO a VALUES " + ", ".join(f"({i}, 'value {i}')" for i in range(3000)))
    _rows(conn, "INSERT INTO a VALUES (1, 'again')")

    data = {r[0]: r for r in _rows(conn, "SHOW DATA")}
    assert list(data) == ["a", "b", "Total", "Quota", "Left"]
    assert data["a"][2] == 6 and data["b"][2] == 2 and data["Total"][2] == 8
    assert _bytes(data["a"][1]) > 0 and data["b"][1] == "0.000 "
    assert abs(_bytes(data["Total"][1]) - _bytes(data["a"][1])) < 1e-6 * _bytes(data["a"][1]) + 1
    assert data["Quota"][1:3] == ("1024.000 TB", 1073741824)
    assert data["Left"][2] == 1073741824 - 8

    table = _rows(conn, f"SHOW DATA FROM {fresh_db}.a")
    assert [r[:2] for r in table] == [("a", "a"), ("", "Total")]
    assert table[0][3:5] == (6, 3001) and table[1][3] == 6

    tablets = _rows(conn, "SHOW TABLETS FROM a")
    assert len(tablets) == 6  # 3 tablets x 2 replicas
    per_tablet = {}
    for r in tablets:
        per_tablet.setdefault(r[0], set()).add(r[10])  # RowCount, the same on each replica
    assert all(len(v) == 1 for v in per_tablet.values())
    assert sum(next(iter(v)) for v in per_tablet.values()) == 3001
    assert {len({r[2] for r in tablets if r[0] == t}) for t in per_tablet} == {2}


def test_show_partitions_data_size(server, fresh_db):
    """SHOW PARTITIONS' DataSize is the partition's tablets' published data (it read 0 always)."""
    conn = server.connect(fresh_db)
    _rows(conn, "CREATE TABLE p (d DATE, k INT) DUPLICATE KEY(d) PARTITION BY RANGE(d) "
                "(PARTITION p1 VALUES LESS THAN ('2024-02-01'), PARTITION p2 VALUES LESS THAN "
                "('2024-03-01')) DISTRIBUTED BY HASH(k) BUCKETS 4 "
                "PROPERTIES ('replication_num' = '1')")
    _rows(conn, "INSERT INTO p VALUES " + ", ".join(f"('2024-01-{1 + i % 28:02d}', {i})"
                                                   for i in range(2000)))
    sizes = {r[1]: _bytes(r[14]) for r in _rows(conn, "SHOW PARTITIONS FROM p")}
    assert sizes["p1"] > 0 and sizes["p2"] == 0
    total = {r[0]: _bytes(r[1]) for r in _rows(conn, "SHOW DATA")}["p"]
    assert abs(sizes["p1"] - total) < 0.01 * total + 1
