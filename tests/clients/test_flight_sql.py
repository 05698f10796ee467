"""Arrow Flight SQL through ADBC's flightsql driver, as Doris 2.1 users connect:
`adbc_driver_flightsql.dbapi.connect("grpc://host:port", db_kwargs={"username", "password"})`.
Results come back as Arrow with Doris's types; sessions keep their database; errors and bad
credentials are Doris's; the port is off unless configured."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

import pytest

from server_process import free_port

fs = pytest.importorskip("adbc_driver_flightsql.dbapi")


@pytest.fixture(scope="module")
def flight_server(tmp_path_factory):
    from server_process import ServerProcess
    base = tmp_path_factory.mktemp("flight")
    port = free_port()
    proc = ServerProcess(base / "data", log_path=base / "server.log",
                         extra_args=("--arrow-flight-sql-port", str(port)))
    proc.flight_port = port
    proc.start()
    conn = proc.connect()
    with conn.cursor() as cur:
        cur.execute("CREATE DATABASE fl")
        cur.execute("""CREATE TABLE fl.t (k INT, b BIGINT, s VARCHAR(10), d DECIMAL(10,2), dt DATE,
            ts DATETIME, l LARGEINT, f DOUBLE) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 3
            PROPERTIES ("replication_num" = "1")""")
        cur.execute("INSERT INTO fl.t VALUES (1, 2, 'x', 1.5, '2024-01-02', '2024-01-02 03:04:05', "
                    "1234567890123, 0.25), (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL)")
        cur.execute("INSERT INTO fl.t (k, b) SELECT k + 10, k FROM fl.t")
    conn.close()
    yield proc
    proc.stop()


def _connect(server, user="root", password=""):
    return fs.connect(f"grpc://127.0.0.1:{server.flight_port}",
                      db_kwargs={"username": user, "password": password})


def test_query_returns_doris_types(flight_server):
    import pyarrow as pa
    with _connect(flight_server) as conn, conn.cursor() as cur:
        cur.execute("SELECT k, b, s, d, dt, ts, l, f FROM fl.t WHERE k < 10 ORDER BY k")
        table = cur.fetch_arrow_table()
    assert table.schema.types == [pa.int32(), pa.int64(), pa.string(), pa.decimal128(10, 2),
                                  pa.date32(), pa.timestamp("us"), pa.string(), pa.float64()]
    assert table.to_pylist() == [
        {"k": 1, "b": 2, "s": "x", "d": Decimal("1.50"), "dt": date(2024, 1, 2),
         "ts": datetime(2024, 1, 2, 3, 4, 5), "l": "1234567890123", "f": 0.25},
        {"k": 2, "b": None, "s": None, "d": None, "dt": None, "ts": None, "l": None, "f": None}]


def test_session_database_aggregates_and_fetch_df(flight_server):
    with _connect(flight_server) as conn, conn.cursor() as cur:
        cur.execute("USE fl")
        cur.execute("SELECT count(*) AS n, sum(b) AS sb FROM t")
        assert cur.fetchall() == [(4, 5)]
        cur.execute("SELECT k FROM t ORDER BY k")
        assert cur.fetch_df()["k"].tolist() == [1, 2, 11, 12]


def test_errors_are_doris_errors(flight_server):
    with _connect(flight_server) as conn, conn.cursor() as cur:
        with pytest.raises(Exception, match=r"errCode = 2, detailMessage = Table \[nope\] does not exist"):
            cur.execute("SELECT * FROM fl.nope")
        with pytest.raises(Exception, match="errCode = 2, detailMessage = Syntax error"):
            cur.execute("SELEC 1")
    with pytest.raises(Exception, match="Access denied for user 'bob'"):
        _connect(flight_server, "bob", "x")


def test_accounts_and_privileges(flight_server):
    # Flight SQL logs in against the same accounts as the MySQL port and runs as that user
    conn = flight_server.connect()
    with conn.cursor() as cur:
        cur.execute("CREATE USER 'fl_u' IDENTIFIED BY 'pw'")
        cur.execute("CREATE TABLE fl.secret (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) "
                    "BUCKETS 1 PROPERTIES ('replication_num' = '1')")
        cur.execute("GRANT SELECT_PRIV ON fl.t TO 'fl_u'")
    conn.close()
    with pytest.raises(Exception, match="Access denied for user 'fl_u'"):
        _connect(flight_server, "fl_u", "wrong")
    with _connect(flight_server, "fl_u", "pw") as conn, conn.cursor() as cur:
        cur.execute("SELECT count(*) FROM fl.t")
        assert cur.fetchall() == [(4,)]
        with pytest.raises(Exception, match="SELECT command denied to user 'fl_u'"):
            cur.execute("SELECT * FROM fl.secret")
        with pytest.raises(Exception, match="denied"):
            cur.execute("INSERT INTO fl.t (k) VALUES (99)")


def test_metadata_as_adbc_reads_it(flight_server):
    # get_objects (catalogs, schemas, tables, columns), get_table_schema, get_table_types and
    # get_info: the Flight SQL metadata commands, filtered by the user's privileges
    with _connect(flight_server) as conn:
        objects = conn.adbc_get_objects(depth="tables", catalog_filter="internal",
                                        db_schema_filter="fl").read_all().to_pylist()
        assert [c["catalog_name"] for c in objects] == ["internal"]
        schemas = objects[0]["catalog_db_schemas"]
        assert [s["db_schema_name"] for s in schemas] == ["fl"]
        names = {t["table_name"]: t["table_type"] for t in schemas[0]["db_schema_tables"]}
        assert names.get("t") == "TABLE", names
        schema = conn.adbc_get_table_schema("t", db_schema_filter="fl")
        assert schema.names == ["k", "b", "s", "d", "dt", "ts", "l", "f"]
        assert str(schema.field("d").type) == "decimal128(10, 2)"
        assert {"TABLE", "VIEW"} <= set(conn.adbc_get_table_types())
        info = conn.adbc_get_info()
        assert info["vendor_name"] == "minidoris", info
    with _connect(flight_server, "fl_u", "pw") as conn:  # sees only what it may
        objects = conn.adbc_get_objects(depth="tables", db_schema_filter="fl").read_all()
        tables = [t["table_name"] for c in objects.to_pylist() for s in c["catalog_db_schemas"]
                  for t in s["db_schema_tables"]]
        assert "t" in tables and "secret" not in tables, tables


def test_off_by_default():
    # conf/minidoris.conf sets -1 (Doris's default): the server starts no Flight SQL listener
    from pathlib import Path

    from server.config import load_config
    conf = Path(__file__).resolve().parents[2] / "conf" / "minidoris.conf"
    assert load_config(conf).arrow_flight_sql_port == -1


def test_array_columns_come_back_as_arrow_lists(flight_server):
    import pyarrow as pa
    conn = flight_server.connect()
    with conn.cursor() as cur:
        cur.execute("""CREATE TABLE fl.arr (k INT, a ARRAY<INT>, s ARRAY<STRING>) DUPLICATE KEY(k)
            DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES ("replication_num" = "1")""")
        cur.execute("INSERT INTO fl.arr VALUES (1, [1, NULL], ['x']), (2, NULL, [])")
    conn.close()
    with _connect(flight_server) as conn, conn.cursor() as cur:
        cur.execute("SELECT k, a, s FROM fl.arr ORDER BY k")
        table = cur.fetch_arrow_table()
    assert table.schema.types == [pa.int32(), pa.list_(pa.int32()), pa.list_(pa.string())]
    assert table.to_pylist() == [{"k": 1, "a": [1, None], "s": ["x"]},
                                 {"k": 2, "a": None, "s": []}]


def test_json_columns_come_back_as_strings(flight_server):
    import pyarrow as pa
    conn = flight_server.connect()
    with conn.cursor() as cur:
        cur.execute("""CREATE TABLE fl.js (k INT, j JSON) DUPLICATE KEY(k)
            DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES ("replication_num" = "1")""")
        cur.execute("""INSERT INTO fl.js VALUES (1, '{"a": [1, 2]}'), (2, NULL)""")
    conn.close()
    with _connect(flight_server) as conn, conn.cursor() as cur:
        cur.execute("SELECT k, j, jsonb_extract(j, '$.a') FROM fl.js ORDER BY k")
        table = cur.fetch_arrow_table()
    assert table.schema.types == [pa.int32(), pa.string(), pa.string()]
    assert table.to_pylist() == [{"k": 1, "j": '{"a":[1,2]}', "jsonb_extract(j, '$.a')": "[1,2]"},
                                 {"k": 2, "j": None, "jsonb_extract(j, '$.a')": None}]
