"""Doris's Python ecosystem against the server: pydoris (the SQLAlchemy `doris://` dialect that
Apache Superset uses) with its inspector and pandas read_sql/to_sql, with both `/db` and the
multi-catalog `/internal.db` URL; mysqlclient (MySQLdb, the C driver pydoris runs on); aiomysql
(asyncio). Each runs DDL, loads, queries with parameters, reads metadata and gets Doris's error
on bad input with the connection still usable.
"""

from __future__ import annotations

import asyncio
import datetime
import os
from decimal import Decimal

import pytest


def _require(module: str):
    try:
        return __import__(module)
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail(f"{module} is required in CI (pip install -e '.[test]'; Debian libmariadb-dev)")
        pytest.skip(f"{module} is not installed")


@pytest.fixture
def shop(server, fresh_db):
    conn = server.connect(fresh_db)
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE orders (id INT, city VARCHAR(20), amount DECIMAL(10, 2), d DATE) "
                    "UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 2 "
                    'PROPERTIES ("replication_num" = "1")')
        cur.execute("INSERT INTO orders VALUES (1, 'Beijing', 10.50, '2024-01-02'), "
                    "(2, 'Shanghai', 20.00, '2024-01-03')")
    conn.close()
    return fresh_db


@pytest.mark.parametrize("catalog_prefix", ["", "internal."], ids=["db", "internal.db"])
def test_pydoris_inspector_and_pandas(server, shop, catalog_prefix):
    _require("pydoris")
    pd = _require("pandas")
    import sqlalchemy as sa
    engine = sa.create_engine(f"doris://root:@{server.host}:{server.port}/{catalog_prefix}{shop}")
    try:
        insp = sa.inspect(engine)
        assert shop in insp.get_schema_names()
        assert insp.get_table_names() == ["orders"]
        cols = {c["name"]: c for c in insp.get_columns("orders")}
        assert list(cols) == ["id", "city", "amount", "d"]
        assert isinstance(cols["amount"]["type"], sa.DECIMAL) and cols["amount"]["type"].scale == 2
        assert cols["city"]["type"].length == 20
        assert insp.get_view_names() == []
        assert isinstance(insp.get_indexes("orders"), list)

        df = pd.read_sql("SELECT id, city, amount FROM orders ORDER BY id", engine)
        assert df["city"].tolist() == ["Beijing", "Shanghai"]
        assert df["amount"].tolist() == [Decimal("10.50"), Decimal("20.00")]
        got = pd.read_sql(sa.text("SELECT id FROM orders WHERE city = :c"), engine,
                          params={"c": "Shanghai"})
        assert got["id"].tolist() == [2]

        frame = pd.DataFrame({"k": [1, 2, 3], "name": ["x", "it's", None],
                              "when": [datetime.date(2024, 1, i) for i in (1, 2, 3)]})
        frame.to_sql("from_pandas", engine, if_exists="replace", index=False)
        back = pd.read_sql("SELECT k, name, `when` FROM from_pandas ORDER BY k", engine)
        assert back["name"].tolist()[:2] == ["x", "it's"] and back["name"].isna().tolist()[2]
        assert "from_pandas" in sa.inspect(engine).get_table_names()

        with engine.connect() as conn:
            with pytest.raises(sa.exc.DatabaseError, match="Unknown column 'nope'"):
                conn.execute(sa.text("SELECT nope FROM orders"))
        with engine.connect() as conn:
            assert conn.execute(sa.text("SELECT count(*) FROM orders")).scalar() == 2
    finally:
        engine.dispose()


def test_mysqlclient(server, shop):
    MySQLdb = _require("MySQLdb")
    conn = MySQLdb.connect(host=server.host, port=server.port, user="root", passwd="",
                           db=f"internal.{shop}", autocommit=True, charset="utf8mb4")
    cur = conn.cursor()
    cur.execute("INSERT INTO orders VALUES (%s, %s, %s, %s)", (3, "it's", Decimal("1.25"), "2024-1-4"))
    cur.execute("SELECT id, city, amount, d FROM orders WHERE id >= %s ORDER BY id", (2,))
    assert cur.fetchall() == ((2, "Shanghai", Decimal("20.00"), datetime.date(2024, 1, 3)),
                              (3, "it's", Decimal("1.25"), datetime.date(2024, 1, 4)))
    assert [d[0] for d in cur.description] == ["id", "city", "amount", "d"]
    with pytest.raises(MySQLdb.OperationalError) as err:
        cur.execute("SELECT nope FROM orders")
    assert err.value.args[0] == 1054
    cur.execute("SELECT count(*) FROM orders")
    assert cur.fetchone() == (3,)
    # COM_STATISTICS (mysqladmin status) and COM_SET_OPTION (multi-statements, JDBC batches)
    assert conn.stat().startswith("Uptime: ")
    conn.set_server_option(0)  # MYSQL_OPTION_MULTI_STATEMENTS_ON
    cur.execute("SELECT 1")
    assert cur.fetchone() == (1,)
    # LARGEINT comes as text (utf8), not bytes
    cur.execute("SELECT CAST(12345678901234567890123 AS LARGEINT)")
    assert cur.fetchone() == ("12345678901234567890123",)
    conn.close()


def test_aiomysql(server, shop):
    aiomysql = _require("aiomysql")

    async def run():
        conn = await aiomysql.connect(host=server.host, port=server.port, user="root",
                                      password="", db=shop, autocommit=True)
        async with conn.cursor() as cur:
            await cur.execute("SELECT id, city FROM orders WHERE amount > %s ORDER BY id", (5,))
            rows = await cur.fetchall()
            with pytest.raises(aiomysql.ProgrammingError, match="no_such_table"):
                await cur.execute("SELECT * FROM no_such_table")
            await cur.execute("SELECT @@version_comment")
            banner = await cur.fetchone()
        conn.close()
        return rows, banner

    rows, banner = asyncio.run(run())
    assert rows == ((1, "Beijing"), (2, "Shanghai"))
    assert banner[0].startswith("Doris version")
