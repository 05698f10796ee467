"""What BI tools ask at connect and while browsing a schema, through real clients:

- JDBC (MariaDB Connector/J, the driver DBeaver, Metabase and Tableau-style tools use for
  MySQL-protocol servers): every DatabaseMetaData call they make, and the statements they
  send (SHOW TABLE STATUS, SHOW FULL COLUMNS, information_schema queries, user variables,
  SHOW PROCEDURE STATUS ...), each must succeed with the rows Doris gives;
- SQLAlchemy's mysql dialect over PyMySQL (Superset, pandas): inspector reflection of tables
  and views, `Table(..., autoload_with=engine)`, pandas `to_sql` / `read_sql`.
"""

from __future__ import annotations

import subprocess
import warnings
from pathlib import Path

import pytest

from tests.clients.jdbc_support import JAR, require_java

SOURCE = Path(__file__).parent / "java" / "BiMetadata.java"

_DDL = [
    "CREATE TABLE orders (id BIGINT NOT NULL COMMENT 'order id', region VARCHAR(16), "
    "amount DECIMAL(12, 2), placed_at DATETIME) UNIQUE KEY(id) COMMENT 'orders' "
    "DISTRIBUTED BY HASH(id) BUCKETS 2 PROPERTIES ('replication_num' = '1')",
    "INSERT INTO orders VALUES (1, 'north', 10.50, '2024-01-02 03:04:05'), "
    "(2, 'south', 20.25, NULL)",
    "CREATE VIEW big_orders AS SELECT id, amount * 2 AS doubled FROM orders WHERE amount > 15",
]


def _setup(server, db: str) -> None:
    with server.connect(db) as conn, conn.cursor() as cur:
        for sql in _DDL:
            cur.execute(sql)


def test_jdbc_bi_metadata(server, fresh_db, tmp_path):
    require_java()
    _setup(server, fresh_db)
    subprocess.run(["javac", "-cp", str(JAR), "-d", str(tmp_path), str(SOURCE)], check=True)
    url = f"jdbc:mysql://{server.host}:{server.port}/{fresh_db}?user=root"
    statements = [
        f"SHOW TABLE STATUS FROM `{fresh_db}`",
        f"SHOW FULL COLUMNS FROM `orders` FROM `{fresh_db}`",
        f"SHOW PROCEDURE STATUS WHERE Db = '{fresh_db}'",
        f"SHOW FUNCTION STATUS WHERE Db = '{fresh_db}'",
        f"SHOW TRIGGERS FROM `{fresh_db}`",
        "SET @row_limit = 1",
        "SELECT id FROM orders ORDER BY id LIMIT 5",
        "SELECT @row_limit, @unset",
        f"SELECT TABLE_NAME, TABLE_TYPE, ENGINE, TABLE_ROWS FROM information_schema.TABLES "
        f"WHERE TABLE_SCHEMA = '{fresh_db}' ORDER BY TABLE_NAME",
    ]
    proc = subprocess.run(["java", "-cp", f"{JAR}:{tmp_path}", "BiMetadata", url, fresh_db,
                           "orders", "big_orders", *statements],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = dict(line.split(" => ", 1) for line in proc.stdout.splitlines() if " => " in line)
    failed = {k: v for k, v in out.items() if v.startswith("ERR")}
    assert not failed, failed
    assert out["tables"] == "2 [orders|TABLE|orders] [big_orders|VIEW|]"
    assert out["views"] == "1 [big_orders]"
    assert out["columns"] == ("4 [id|BIGINT|-5|19|0|NO|order id] [region|VARCHAR|12|16|null|YES|] "
                              "[amount|DECIMAL|3|12|2|YES|] [placed_at|DATETIME|93|19|null|YES|]")
    assert out["viewColumns"] == "2 [id|BIGINT|-5|19|0] [doubled|DECIMAL|3|15|2]"
    for empty in ("primaryKeys", "importedKeys", "exportedKeys", "indexInfo", "procedures",
                  "procedureColumns", "functions", "functionColumns"):
        assert out[empty] == "0", empty
    status = out[statements[0]]
    assert status.startswith("2 [big_orders|View|null|null|0|0|0|null|null|null|null|"), status
    assert "[orders|Doris|null|null|2|" in status and "|utf-8|null|null|orders]" in status
    assert out[statements[1]].startswith("4 [id|bigint||NO|YES|null|||order id] "
                                         "[region|varchar(16)||YES|NO|null|NONE||]")  # merge-on-write
    assert [out[s] for s in statements[2:5]] == ["0", "0", "0"]
    assert out[statements[7]] == "1 [1|null]"
    assert out[statements[8]] == "2 [big_orders|VIEW|View|0] [orders|BASE TABLE|Doris|2]"


def test_sqlalchemy_mysql_dialect_reflection(server, fresh_db):
    sa = pytest.importorskip("sqlalchemy")
    pd = pytest.importorskip("pandas")
    _setup(server, fresh_db)
    engine = sa.create_engine(f"mysql+pymysql://root@{server.host}:{server.port}/{fresh_db}")
    try:
        with warnings.catch_warnings():  # Doris's DUPLICATE KEY / PROPERTIES clauses are unknown
            warnings.simplefilter("ignore", sa.exc.SAWarning)  # to the MySQL DDL parser
            insp = sa.inspect(engine)
            assert fresh_db in insp.get_schema_names()
            assert insp.get_table_names() == ["orders"]
            assert insp.get_view_names() == ["big_orders"]
            assert insp.has_table("orders") and not insp.has_table("nope")
            cols = insp.get_columns("orders")
            assert [(c["name"], str(c["type"]), c["nullable"]) for c in cols] == [
                ("id", "BIGINT", False), ("region", "VARCHAR(16)", True),
                ("amount", "DECIMAL(12, 2)", True), ("placed_at", "DATETIME", True)]
            assert cols[0]["comment"] == "order id"
            assert insp.get_pk_constraint("orders")["constrained_columns"] == []
            assert insp.get_indexes("orders") == []
            assert insp.get_foreign_keys("orders") == []
            assert insp.get_unique_constraints("orders") == []
            view_sql = insp.get_view_definition("big_orders")
            assert view_sql.startswith("CREATE VIEW `big_orders`")
            table = sa.Table("orders", sa.MetaData(), autoload_with=engine)
            with engine.connect() as conn:
                rows = conn.execute(sa.select(table.c.id, table.c.amount)
                                    .where(table.c.amount > 15)).fetchall()
            assert [(r[0], str(r[1])) for r in rows] == [(2, "20.25")]
            frame = pd.DataFrame({"k": [1, 2], "name": ["a", None]})
            frame.to_sql("from_pandas", engine, index=False, if_exists="replace")
            back = pd.read_sql("SELECT k, name FROM from_pandas ORDER BY k", engine)
            assert back["k"].tolist() == [1, 2] and back["name"].tolist() == ["a", None]
            assert "from_pandas" in sa.inspect(engine).get_table_names()
    finally:
        engine.dispose()


def test_pydoris_reflects_view_columns(server, fresh_db):
    """A view's columns through pydoris's doris:// dialect (Superset), from DESC / SHOW COLUMNS
    of the view. (SQLAlchemy's plain mysql dialect cannot parse Doris's upper-case DESC types,
    INT / DECIMAL(15, 2), for views: as against Doris itself.)"""
    sa = pytest.importorskip("sqlalchemy")
    pytest.importorskip("pydoris")
    _setup(server, fresh_db)
    engine = sa.create_engine(f"doris://root:@{server.host}:{server.port}/{fresh_db}")
    try:
        cols = sa.inspect(engine).get_columns("big_orders")
        assert [(c["name"], str(c["type"])) for c in cols] == [("id", "BIGINT"),
                                                               ("doubled", "DECIMAL(15, 2)")]
    finally:
        engine.dispose()
