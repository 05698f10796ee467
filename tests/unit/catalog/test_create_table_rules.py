"""CREATE TABLE parsing and Doris's validation rules (no server, no storage)."""

import pytest

from catalog.create_table import new_table, plan_partitions
from catalog.errors import DorisError
from server.parser.create_table import parse_create_table
from server.parser.tokens import TokenCursor


def table(sql: str):
    return new_table(parse_create_table(TokenCursor(sql)), 1, 2)


def error(sql: str) -> str:
    with pytest.raises(DorisError) as e:
        table(sql)
    return e.value.message


def test_aggregate_table_from_seed_004():
    t = table("""CREATE TABLE example_tbl (
        `user_id` LARGEINT NOT NULL, `date` DATE NOT NULL, `city` VARCHAR(20),
        `last_visit_date` DATETIME REPLACE DEFAULT "1970-01-01 00:00:00",
        `cost` BIGINT SUM DEFAULT "0", `max_dwell_time` INT MAX DEFAULT "0",
        `min_dwell_time` INT MIN DEFAULT "99999")
        AGGREGATE KEY(`user_id`, `date`, `city`) DISTRIBUTED BY HASH(`user_id`) BUCKETS 1""")
    assert t.keys_type == "AGG_KEYS"
    assert [c.name for c in t.key_columns] == ["user_id", "date", "city"]
    assert t.column("cost").aggregation == "SUM"
    assert t.column("user_id").nullable is False and t.column("city").nullable is True
    assert t.distribution.buckets == 1 and t.distribution.columns == ["user_id"]


def test_implicit_keys():
    agg = table("CREATE TABLE t (a INT, b VARCHAR(10), v BIGINT SUM) DISTRIBUTED BY HASH(a) BUCKETS 1")
    assert agg.keys_type == "AGG_KEYS" and [c.name for c in agg.key_columns] == ["a", "b"]
    dup = table("CREATE TABLE t (a INT, b VARCHAR(10), c INT, d INT) DISTRIBUTED BY HASH(a) BUCKETS 1")
    # Leading columns up to 3 or 36 bytes, stopping right after the first VARCHAR.
    assert dup.keys_type == "DUP_KEYS" and [c.name for c in dup.key_columns] == ["a", "b"]
    assert "first column" in error("CREATE TABLE t (a DOUBLE, b INT) DISTRIBUTED BY HASH(b) BUCKETS 1")


@pytest.mark.parametrize("sql, message", [
    ("CREATE TABLE t (a INT SUM, b INT) AGGREGATE KEY(a) DISTRIBUTED BY HASH(a) BUCKETS 1",
     "Key column[a] should not specify aggregate type"),
    ("CREATE TABLE t (a INT, b INT, c INT SUM) AGGREGATE KEY(b) DISTRIBUTED BY HASH(b) BUCKETS 1",
     "Key columns should be a ordered prefix of the schema"),
    ("CREATE TABLE t (a INT, b INT) AGGREGATE KEY(a) DISTRIBUTED BY HASH(a) BUCKETS 1",
     "should specify aggregate type for non-key column[b]"),
    ("CREATE TABLE t (a INT, b INT SUM) DUPLICATE KEY(a) DISTRIBUTED BY HASH(a) BUCKETS 1",
     "should not specify aggregate type for non-key column[b]"),
    ("CREATE TABLE t (a INT, b INT SUM) AGGREGATE KEY(a) DISTRIBUTED BY HASH(b) BUCKETS 1",
     "Distribution column[b] is not key column"),
    ("CREATE TABLE t (a INT, b INT) DUPLICATE KEY(a) DISTRIBUTED BY HASH(z) BUCKETS 1",
     "Distribution column(z) doesn't exist."),
    ("CREATE TABLE t (a STRING, b INT) DUPLICATE KEY(a) DISTRIBUTED BY HASH(b) BUCKETS 1",
     "String Type should not be used in key column[a]"),
    ("CREATE TABLE t (a INT, a INT) DUPLICATE KEY(a) DISTRIBUTED BY HASH(a) BUCKETS 1",
     "Duplicate column name 'a'"),
    ("CREATE TABLE t (a INT, b INT) DUPLICATE KEY(z) DISTRIBUTED BY HASH(a) BUCKETS 1",
     "Key column[z] doesn't exist."),
])
def test_validation_errors(sql, message):
    assert message in error(sql)


def test_unknown_type_is_an_error():
    with pytest.raises(DorisError):
        table("CREATE TABLE t (a INTT) DISTRIBUTED BY HASH(a) BUCKETS 1")


def test_range_partitions_chain_and_overlap():
    stmt = parse_create_table(TokenCursor(
        "CREATE TABLE t (d DATE, v INT) DUPLICATE KEY(d) PARTITION BY RANGE(d) ("
        "PARTITION p1 VALUES LESS THAN ('2020-01-01'), PARTITION p2 VALUES LESS THAN ('2020-02-01'),"
        "PARTITION p3 VALUES [('2021-01-01'), ('2021-02-01'))) DISTRIBUTED BY HASH(d) BUCKETS 1"))
    t = new_table(stmt, 1, 2)
    specs = plan_partitions(t, stmt.partitions, [])
    assert specs[0][1] == [] and specs[0][2] == ["2020-01-01"]
    assert specs[1][1] == ["2020-01-01"] and specs[1][2] == ["2020-02-01"]
    assert specs[2][1] == ["2021-01-01"]
    overlap = parse_create_table(TokenCursor(
        "CREATE TABLE t (d DATE, v INT) DUPLICATE KEY(d) PARTITION BY RANGE(d) ("
        "PARTITION p1 VALUES [('2020-01-01'), ('2020-03-01')), "
        "PARTITION p2 VALUES [('2020-02-01'), ('2020-04-01'))) DISTRIBUTED BY HASH(d) BUCKETS 1"))
    with pytest.raises(DorisError) as e:
        plan_partitions(new_table(overlap, 1, 2), overlap.partitions, [])
    assert "is intersected with range" in e.value.message
