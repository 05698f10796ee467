"""The privilege matrix: every (granted privilege, grant level, direct or via a role) x statement
pair runs through the wire as a fresh user, and must succeed exactly when Doris would allow it,
else fail with Doris's error number (1142 table, 1044 database, 1227 global).

A statement row says which privileges satisfy it and at which grant levels they count:
`g` = ON *.*.*, `d` = ON internal.<db>.*, `t` = ON internal.<db>.t (the table the statement
names; statements on other tables, like CREATE TABLE x, are not covered by a grant on t).
Statements that change state are undone by root after a success (`undo`) or set up before
(`setup`); a refused DROP must leave the table in place. The case count is printed.
"""

from __future__ import annotations

import pymysql

from server_process import connect, unique_name

SHOW = {"SELECT_PRIV", "LOAD_PRIV", "ALTER_PRIV", "CREATE_PRIV", "DROP_PRIV", "ADMIN_PRIV"}
TABLE = "(k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1"

# (sql, privileges that satisfy it, levels at which they count, errno when refused,
#  setup run by root before, undo run by root after a success)
STATEMENTS = [
    ("SELECT * FROM {db}.t", {"SELECT_PRIV", "ADMIN_PRIV"}, "gdt", 1142, None, None),
    ("SELECT count(*) FROM {db}.t a JOIN {db}.t b ON a.k = b.k", {"SELECT_PRIV", "ADMIN_PRIV"},
     "gdt", 1142, None, None),
    ("INSERT INTO {db}.t VALUES (1, 1)", {"LOAD_PRIV", "ADMIN_PRIV"}, "gdt", 1142, None, None),
    ("DELETE FROM {db}.t WHERE k = 99", {"LOAD_PRIV", "ADMIN_PRIV"}, "gdt", 1142, None, None),
    ("TRUNCATE TABLE {db}.t", {"LOAD_PRIV", "ADMIN_PRIV"}, "gdt", 1142, None, None),
    ("ALTER TABLE {db}.t ADD INDEX iv (v) USING BITMAP", {"ALTER_PRIV", "ADMIN_PRIV"}, "gdt",
     1142, None, "DROP INDEX iv ON {db}.t"),
    ("CREATE TABLE {db}.x " + TABLE, {"CREATE_PRIV", "ADMIN_PRIV"}, "gd", 1142, None,
     "DROP TABLE {db}.x"),
    ("DROP TABLE {db}.t2", {"DROP_PRIV", "ADMIN_PRIV"}, "gd", 1142,
     "CREATE TABLE IF NOT EXISTS {db}.t2 " + TABLE, None),
    ("DESC {db}.t", SHOW, "gdt", 1142, None, None),
    ("SHOW CREATE TABLE {db}.t", SHOW, "gdt", 1142, None, None),
    ("USE {db}", SHOW, "gdt", 1044, None, None),
    ("ALTER TABLE {db}.t RENAME t_renamed", {"ALTER_PRIV", "ADMIN_PRIV"}, "gdt", 1142, None,
     "ALTER TABLE {db}.t_renamed RENAME t"),
    ("SHOW LOAD FROM {db}", SHOW, "gdt", 1044, None, None),
    ("SHOW ALTER TABLE ROLLUP FROM {db}", SHOW, "gdt", 1044, None, None),
    ("ANALYZE TABLE {db}.t WITH SYNC", {"SELECT_PRIV", "ADMIN_PRIV"}, "gdt", 1142, None, None),
    ("SHOW COLUMN STATS {db}.t", {"SELECT_PRIV", "ADMIN_PRIV"}, "gdt", 1142, None, None),
    ("CREATE DATABASE {db}_new", {"CREATE_PRIV", "ADMIN_PRIV"}, "g", 1044, None,
     "DROP DATABASE {db}_new"),
    ("DROP DATABASE {db}_gone", {"DROP_PRIV", "ADMIN_PRIV"}, "g", 1044,
     "CREATE DATABASE IF NOT EXISTS {db}_gone", None),
    ("ADMIN SHOW FRONTEND CONFIG LIKE 'qe_max_connection'", {"ADMIN_PRIV"}, "g", 1227, None,
     None),
    ("SET GLOBAL query_timeout = 300", {"ADMIN_PRIV"}, "g", 1227, None,
     "SET GLOBAL query_timeout = 900"),  # the shared server keeps its default for others
    ("SHOW PROC '/backends'", {"ADMIN_PRIV"}, "g", 1227, None, None),
    ("SHOW ROLES", {"GRANT_PRIV", "ADMIN_PRIV"}, "g", 1227, None, None),
    ("SHOW ALL GRANTS", {"GRANT_PRIV", "ADMIN_PRIV"}, "g", 1227, None, None),
    ("CREATE USER IF NOT EXISTS {db}_nu", {"GRANT_PRIV", "ADMIN_PRIV"}, "g", 1227, None,
     "DROP USER IF EXISTS {db}_nu"),
    # administration objects: ADMIN (Create*Stmt), partitions ALTER on the table
    ("SHOW SQL_BLOCK_RULE", {"ADMIN_PRIV"}, "g", 1227, None, None),
    ("CREATE SQL_BLOCK_RULE {db}_r PROPERTIES ('sql' = 'zzz')", {"ADMIN_PRIV"}, "g", 1227,
     None, "DROP SQL_BLOCK_RULE {db}_r"),
    ("CREATE WORKLOAD GROUP {db}_wg PROPERTIES ('cpu_share' = '8')", {"ADMIN_PRIV"}, "g", 1227,
     None, "DROP WORKLOAD GROUP {db}_wg"),
    ("CREATE ENCRYPTKEY {db}.k AS 'secret'", {"ADMIN_PRIV"}, "g", 1227, None,
     "DROP ENCRYPTKEY {db}.k"),
    ("SHOW ENCRYPTKEYS FROM {db}", {"ADMIN_PRIV"}, "g", 1044, None, None),
    ("ALTER TABLE {db}.t MODIFY PARTITION t SET ('storage_medium' = 'HDD')",
     {"ALTER_PRIV", "ADMIN_PRIV"}, "gdt", 1142, None, None),
]

GRANTS = [(None, None)] + [(p, level) for p in ("SELECT_PRIV", "LOAD_PRIV", "ALTER_PRIV",
                                                 "CREATE_PRIV", "DROP_PRIV", "GRANT_PRIV")
                           for level in "gdt"] + [("ADMIN_PRIV", "g")]


def _target(level: str, db: str) -> str:
    return {"g": "*.*.*", "d": f"internal.{db}.*", "t": f"internal.{db}.t"}[level]


def _allowed(priv: str | None, level: str | None, needs: set, levels: str) -> bool:
    return priv is not None and priv in needs and level in levels


def _run(root, sql: str | None, db: str) -> None:
    if sql:
        with root.cursor() as cur:
            cur.execute(sql.format(db=db))


def test_privilege_matrix(server, capsys):
    db = unique_name("pm")
    root = server.connect()
    _run(root, "CREATE DATABASE {db}", db)
    _run(root, "CREATE TABLE {db}.t " + TABLE, db)
    _run(root, "CREATE TABLE {db}.t2 " + TABLE, db)
    cases, failures = 0, []
    try:
        for via_role in (False, True):
            for n, (priv, level) in enumerate(GRANTS):
                user = f"{db}_u{n}{'r' if via_role else ''}"
                _run(root, f"CREATE USER '{user}'@'%' IDENTIFIED BY 'pw{n}'", db)
                grantee = f"'{user}'@'%'"
                if via_role:
                    _run(root, f"CREATE ROLE {user}_role", db)
                    grantee = f"ROLE '{user}_role'"
                if priv is not None:
                    _run(root, f"GRANT {priv} ON {_target(level, db)} TO {grantee}", db)
                if via_role:
                    _run(root, f"GRANT '{user}_role' TO '{user}'@'%'", db)
                conn = connect(server.host, server.port, user=user, password=f"pw{n}")
                try:
                    for sql, needs, levels, errno, setup, undo in STATEMENTS:
                        cases += 1
                        _run(root, setup, db)
                        want = _allowed(priv, level, needs, levels)
                        got = None
                        try:
                            with conn.cursor() as cur:
                                cur.execute(sql.format(db=db))
                                cur.fetchall()
                        except pymysql.MySQLError as e:
                            got = e.args[0]
                        if want and got is None:
                            _run(root, undo, db)
                        elif want or got != errno:
                            failures.append(f"{priv}@{level}{' (role)' if via_role else ''}: "
                                            f"{sql.format(db=db)} -> {got or 'ok'}, expected "
                                            f"{'ok' if want else errno}")
                        if not want and sql.startswith("DROP TABLE"):
                            with root.cursor() as cur:  # refused: the table is still there
                                cur.execute(f"SHOW TABLES FROM {db} LIKE 't2'")
                                assert cur.fetchall(), "a refused DROP TABLE dropped the table"
                finally:
                    conn.close()
                    _run(root, f"DROP USER '{user}'@'%'", db)
                    if via_role:
                        _run(root, f"DROP ROLE {user}_role", db)
    finally:
        _run(root, "DROP DATABASE IF EXISTS {db}", db)
        _run(root, "DROP DATABASE IF EXISTS {db}_gone", db)
        root.close()
    with capsys.disabled():  # the count shows in CI's output, not only with -s
        print(f"\nprivilege matrix: {cases} cases, {len(failures)} failures")
    assert not failures, "\n".join(failures[:40])
    assert cases == 2 * len(GRANTS) * len(STATEMENTS)
