"""SHOW TRANSACTION [FROM db] WHERE id = n | label = '...' | status = '...' (Doris's
ShowTransactionStmt / ShowExecutor): the columns of SHOW PROC '/transactions', one load by id
or label, a database's loads by status, and Doris's errors."""

from __future__ import annotations

import pymysql
import pytest

COLUMNS = ["TransactionId", "Label", "Coordinator", "TransactionStatus", "LoadJobSourceType",
           "PrepareTime", "PreCommitTime", "CommitTime", "PublishTime", "FinishTime", "Reason",
           "ErrorReplicasCount", "ListenerId", "TimeoutMs", "ErrMsg"]


def _run(conn, sql: str):
    with conn.cursor() as cur:
        cur.execute(sql)
        return [d[0] for d in cur.description or ()], cur.fetchall()


def test_show_transaction_by_id_label_and_status(server, fresh_db):
    conn = server.connect(fresh_db)
    _run(conn, "CREATE TABLE t (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 "
               "PROPERTIES ('replication_num' = '1')")
    _run(conn, "INSERT INTO t WITH LABEL my_label_1 VALUES (1, 1), (2, 2)")
    _, last = _run(conn, "SHOW LAST INSERT")
    txn = int(last[0][0])
    names, rows = _run(conn, f"SHOW TRANSACTION WHERE id = {txn}")
    assert names == COLUMNS
    assert [(int(r[0]), r[1], r[3], r[4]) for r in rows] == \
        [(txn, "my_label_1", "VISIBLE", "INSERT_STREAMING")]
    _, by_label = _run(conn, f"SHOW TRANSACTION FROM `{fresh_db}` WHERE label = 'my_label_1'")
    assert by_label == rows
    _run(conn, "INSERT INTO t WITH LABEL my_label_2 VALUES (3, 3)")
    _, visible = _run(conn, "SHOW TRANSACTION WHERE status = 'visible'")
    assert [r[1] for r in visible] == ["my_label_2", "my_label_1"]  # newest first
    _, none = _run(conn, "SHOW TRANSACTION WHERE status = 'aborted'")
    assert none == ()


@pytest.mark.parametrize("sql, message", [
    ("SHOW TRANSACTION", "Missing transaction id"),
    ("SHOW TRANSACTION WHERE id > 3", "Where clause should looks like one of them: id = 123 or "
                                      "label = 'label' or status = "
                                      "'prepare/precommitted/committed/visible/aborted'"),
    ("SHOW TRANSACTION WHERE status = 'bogus'",
     "status should be prepare/precommitted/committed/visible/aborted"),
    ("SHOW TRANSACTION WHERE id = 987654321", "transaction with id 987654321 does not exist"),
    ("SHOW TRANSACTION WHERE label = 'nope'", "transaction with label nope does not exist"),
])
def test_show_transaction_errors(server, fresh_db, sql, message):
    conn = server.connect(fresh_db)
    with pytest.raises(pymysql.err.MySQLError) as err:
        _run(conn, sql)
    assert err.value.args[0] == 1105 and message in err.value.args[1]
