"""INVERTED indexes survive restarts and kill -9: the index written inside the segments of a
table created with it, the side files BUILD INDEX writes for data loaded before ADD INDEX, MATCH
results, and the indexes' pruning (RowsInvertedIndexFiltered) after the restart."""

from __future__ import annotations

from test_restart_indexes import profile_counter, query

DDL = """CREATE TABLE logs (id INT NOT NULL, level VARCHAR(8), msg STRING,
INDEX idx_msg (msg) USING INVERTED PROPERTIES("parser" = "english"))
DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 2 PROPERTIES ("replication_num" = "1")"""
WORDS = ["alpha", "beta", "gamma", "delta", "omega"]


def inverted_filtered(conn, sql: str) -> int:
    return profile_counter(conn, sql, "RowsInvertedIndexFiltered")


def test_inverted_index_survives_restart_and_kill9(server_factory):
    srv = server_factory().start()
    conn = srv.connect()
    query(conn, "CREATE DATABASE inv_db")
    query(conn, "USE inv_db")
    query(conn, DDL)
    query(conn, "INSERT INTO logs VALUES " + ", ".join(
        f"({i}, '{['INFO', 'WARN', 'ERROR'][i % 3]}', 'request {i} {WORDS[i % 5]} Done')"
        for i in range(3000)))
    query(conn, "ALTER TABLE logs ADD INDEX idx_level (level) USING INVERTED")
    query(conn, "BUILD INDEX idx_level ON logs")  # side files for the segments loaded before
    q_msg = "SELECT count(*), sum(id) FROM logs WHERE msg MATCH_ANY 'GAMMA'"
    q_level = "SELECT count(*) FROM logs WHERE level MATCH_ANY 'ERROR'"
    q_phrase = "SELECT count(*) FROM logs WHERE msg MATCH_PHRASE 'omega done'"
    expected = [query(conn, q) for q in (q_msg, q_level, q_phrase)]
    assert expected == [((600, sum(range(2, 3000, 5))),), ((1000,),), ((600,),)]
    indexes = query(conn, "SHOW INDEX FROM logs")
    assert inverted_filtered(conn, q_msg) == 2400
    assert inverted_filtered(conn, q_level) == 2000
    conn.close()

    for crash in (srv.restart, lambda: (srv.kill9(), srv.start())):
        crash()
        conn = srv.connect("inv_db")
        assert [query(conn, q) for q in (q_msg, q_level, q_phrase)] == expected
        assert query(conn, "SHOW INDEX FROM logs") == indexes
        assert inverted_filtered(conn, q_msg) == 2400
        assert inverted_filtered(conn, q_level) == 2000
        conn.close()
    assert len(list(srv.data_dir.rglob("*.idx"))) == 2  # idx_level's, one per tablet
