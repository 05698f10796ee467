"""Scan units through the wire (executor/operators/scan.py, storage/scan_unit.py): a table of
many small tablets (4 partitions x 12 buckets = 48 tablets, read in groups) answers exactly as
the same rows in one tablet (read one by one with every index), also after a DELETE (its
tablets leave the units), more loads (several rowsets per tablet), on a Unique-key table
before and after a load that overwrites keys, and with joins, aggregates, runtime filters and
LIMIT.
"""

from __future__ import annotations

import random

import pytest

ROWS = 20_000  # ~400 rows a tablet: segment files (smaller loads write load files)
QUERIES = [
    "SELECT count(*), sum(v), min(s), max(s) FROM {t}",
    "SELECT k, d, v, s FROM {t} WHERE v BETWEEN 100 AND 400 ORDER BY k",
    "SELECT d, count(*), sum(v) FROM {t} WHERE s LIKE 'b%' GROUP BY d ORDER BY d",
    "SELECT * FROM {t} WHERE k = 14321",
    "SELECT k FROM {t} WHERE k IN (1, 77, 5999, 123456) ORDER BY k",
    "SELECT s, count(*) FROM {t} WHERE d >= '2024-03-01' AND v < 50 GROUP BY s ORDER BY s",
    "SELECT t1.k, t1.v, dim.name FROM {t} t1 JOIN dim ON t1.v = dim.id WHERE dim.name = 'n7' "
    "ORDER BY t1.k",
    "SELECT count(*) FROM {t} WHERE v IS NULL",
    "SELECT k, v FROM {t} WHERE d = '2024-02-15' ORDER BY k LIMIT 5",
    "SELECT count(DISTINCT s) FROM {t} WHERE k % 7 = 3",
]


def _run(conn, sql):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall() if cur.description else cur.rowcount


def _values(rows) -> str:
    return ", ".join(f"({k}, '{d}', {'NULL' if v is None else v}, '{s}')" for k, d, v, s in rows)


@pytest.fixture(scope="module")
def conn(server):
    conn = server.connect()
    db = "scan_units_db"
    _run(conn, f"DROP DATABASE IF EXISTS {db}")
    _run(conn, f"CREATE DATABASE {db}")
    _run(conn, f"USE {db}")
    parts = ", ".join(f"PARTITION p{m} VALUES LESS THAN ('2024-0{m + 1}-01')" for m in range(1, 5))
    _run(conn, f"""CREATE TABLE many (k INT NOT NULL, d DATE NOT NULL, v INT, s VARCHAR(8))
                   DUPLICATE KEY(k, d) PARTITION BY RANGE(d) ({parts})
                   DISTRIBUTED BY HASH(k) BUCKETS 12 PROPERTIES ("replication_num" = "1")""")
    _run(conn, """CREATE TABLE one (k INT NOT NULL, d DATE NOT NULL, v INT, s VARCHAR(8))
                  DUPLICATE KEY(k, d) DISTRIBUTED BY HASH(k) BUCKETS 1
                  PROPERTIES ("replication_num" = "1")""")
    _run(conn, """CREATE TABLE dim (id INT NOT NULL, name VARCHAR(8)) DUPLICATE KEY(id)
                  DISTRIBUTED BY HASH(id) BUCKETS 1 PROPERTIES ("replication_num" = "1")""")
    _run(conn, "INSERT INTO dim VALUES " + ", ".join(f"({i}, 'n{i % 10}')" for i in range(500)))
    rng = random.Random(7)
    rows = [(k, f"2024-{rng.randint(1, 4):02d}-{rng.randint(1, 28):02d}",
             None if rng.random() < 0.05 else rng.randint(0, 999),
             rng.choice(["a", "b", "bb", "c", "d"])) for k in range(ROWS)]
    for t in ("many", "one"):
        _run(conn, f"INSERT INTO {t} VALUES {_values(rows)}")
    yield conn, rng
    _run(conn, f"DROP DATABASE IF EXISTS {db}")
    conn.close()


def _same(conn) -> None:
    for q in QUERIES:
        assert _run(conn, q.format(t="many")) == _run(conn, q.format(t="one")), q


def test_many_small_tablets_answer_as_one(conn):
    c, rng = conn
    _same(c)
    # More loads: several rowsets per tablet, still read in units.
    more = [(ROWS + i, f"2024-0{rng.randint(1, 4)}-10", rng.randint(0, 999), "e")
            for i in range(300)]
    for t in ("many", "one"):
        _run(c, f"INSERT INTO {t} VALUES {_values(more)}")
    _same(c)


def test_delete(conn):
    c, _ = conn
    _run(c, "DELETE FROM many PARTITION p2 WHERE v < 100")
    _run(c, "DELETE FROM one WHERE v < 100 AND d >= '2024-02-01' AND d < '2024-03-01'")
    _same(c)


@pytest.mark.parametrize("mow", ["true", "false"])
def test_unique_keys_across_loads(conn, mow):
    """A Unique-key table read in units while each tablet holds one rowset; once a second load
    overwrites keys, a merge-on-write table is still read in units (each segment minus its
    delete bitmap), a merge-on-read one is merged on read (outside the units)."""
    c, rng = conn
    for t, buckets in (("u_many", 24), ("u_one", 1)):
        _run(c, f"DROP TABLE IF EXISTS {t}")
        _run(c, f"""CREATE TABLE {t} (k INT NOT NULL, v INT, s VARCHAR(8)) UNIQUE KEY(k)
                    DISTRIBUTED BY HASH(k) BUCKETS {buckets}
                    PROPERTIES ("replication_num" = "1",
                                "enable_unique_key_merge_on_write" = "{mow}")""")
    first = ", ".join(f"({k}, {rng.randint(0, 99)}, 's{k % 5}')" for k in range(12000))
    # ~370 rows a tablet: segment rowsets, which units read
    second = ", ".join(f"({k}, {rng.randint(0, 99)}, 't{k % 3}')" for k in range(0, 9000))
    queries = ["SELECT count(*), sum(v) FROM {t}", "SELECT s, count(*), max(v) FROM {t} "
               "WHERE v > 20 GROUP BY s ORDER BY s", "SELECT * FROM {t} WHERE k = 999"]
    for values in (first, second):
        for t in ("u_many", "u_one"):
            _run(c, f"INSERT INTO {t} VALUES {values}")
        for q in queries:
            assert _run(c, q.format(t="u_many")) == _run(c, q.format(t="u_one")), q
