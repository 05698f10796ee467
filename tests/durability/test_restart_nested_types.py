"""MAP and STRUCT columns survive restarts and kill -9: segment pages read back equal, merge-on-
read Unique tables still replace whole values, and compaction keeps them."""

from __future__ import annotations

from test_restart_indexes import query

DDL = """CREATE TABLE {name} (k INT, m MAP<STRING, ARRAY<INT>>, s STRUCT<a:INT, b:MAP<INT, STRING>>)
UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2
PROPERTIES ("replication_num" = "1", "enable_unique_key_merge_on_write" = "{mow}")"""


def test_maps_and_structs_survive_restart_and_compaction(server_factory):
    srv = server_factory().start()
    conn = srv.connect()
    query(conn, "CREATE DATABASE nested_db")
    query(conn, "USE nested_db")
    for name, mow in (("mor", "false"), ("mow", "true")):
        query(conn, DDL.format(name=name, mow=mow))
        query(conn, f"INSERT INTO {name} VALUES " + ", ".join(
            f"({i}, {{'k{i}': [{i}, NULL]}}, named_struct('a', {i}, 'b', {{{i}: 'v{i}'}}))"
            for i in range(200)))
        query(conn, f"INSERT INTO {name} VALUES (1, NULL, {{NULL, {{}}}}), (2, {{}}, NULL)")
    expected = {name: query(conn, f"SELECT * FROM {name} ORDER BY k") for name in ("mor", "mow")}
    assert expected["mor"] == expected["mow"]
    assert expected["mor"][:3] == (
        (0, '{"k0":[0, null]}', '{"a":0, "b":{0:"v0"}}'),
        (1, None, '{"a":null, "b":{}}'), (2, "{}", None))
    conn.close()

    for crash in (srv.restart, lambda: (srv.kill9(), srv.start())):
        crash()
        conn = srv.connect("nested_db")
        for name in ("mor", "mow"):
            assert query(conn, f"SELECT * FROM {name} ORDER BY k") == expected[name]
        conn.close()

    conn = srv.connect("nested_db")
    for name in ("mor", "mow"):
        query(conn, f"ADMIN COMPACT TABLE {name} PARTITION {name} WHERE type = 'BASE'")
        assert query(conn, f"SELECT * FROM {name} ORDER BY k") == expected[name]
        assert query(conn, f"SELECT sum(struct_element(s, 'a')), count(m['k5']) FROM {name}") \
            == ((sum(range(200)) - 1 - 2, 1),)  # rows 1 and 2 lost their `a`
    conn.close()
