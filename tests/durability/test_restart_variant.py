"""VARIANT columns survive restarts and kill -9: the canonical texts read back equal from
segment pages and load files, sub-values still extract, and compaction keeps them."""

from __future__ import annotations

from test_restart_indexes import query

DDL = """CREATE TABLE {name} (k INT, v VARIANT NULL) {model} KEY(k) DISTRIBUTED BY HASH(k)
BUCKETS 2 PROPERTIES ("replication_num" = "1")"""


def test_variant_survives_restart_and_compaction(server_factory):
    srv = server_factory().start()
    conn = srv.connect()
    query(conn, "CREATE DATABASE variant_db")
    query(conn, "USE variant_db")
    for name, model in (("dup", "DUPLICATE"), ("uniq", "UNIQUE")):
        query(conn, DDL.format(name=name, model=model))
        query(conn, f"INSERT INTO {name} VALUES " + ", ".join(
            f"({i}, '{{\"n\": {i}, \"s\": \"v{i}\", \"o\": {{\"b\": true, \"a\": [{i}, null]}}}}')"
            for i in range(200)))
        query(conn, f"INSERT INTO {name} VALUES (1, 'text'), (2, NULL), (3, '[1.0, 2.5]')")
    expected = {name: query(conn, f"SELECT k, v, v['o']['a'] FROM {name} ORDER BY k, v['n']")
                for name in ("dup", "uniq")}
    assert expected["uniq"][:5] == (
        (0, '{"n":0,"o":{"a":[0,null],"b":1},"s":"v0"}', "[0,null]"),
        (1, '"text"', None), (2, None, None), (3, "[1,2.5]", None),
        (4, '{"n":4,"o":{"a":[4,null],"b":1},"s":"v4"}', "[4,null]"))
    assert len(expected["dup"]) == 203
    conn.close()

    for crash in (srv.restart, lambda: (srv.kill9(), srv.start())):
        crash()
        conn = srv.connect("variant_db")
        for name in ("dup", "uniq"):
            assert query(conn, f"SELECT k, v, v['o']['a'] FROM {name} ORDER BY k, v['n']") \
                == expected[name]
        conn.close()

    conn = srv.connect("variant_db")
    for name in ("dup", "uniq"):
        query(conn, f"ADMIN COMPACT TABLE {name} PARTITION {name} WHERE type = 'BASE'")
        assert query(conn, f"SELECT k, v, v['o']['a'] FROM {name} ORDER BY k, v['n']") \
            == expected[name]
    assert query(conn, "SELECT sum(CAST(v['n'] AS INT)) FROM uniq") == (
        (sum(range(200)) - 1 - 2 - 3,),)
    conn.close()
