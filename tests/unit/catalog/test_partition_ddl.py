"""ADD / DROP PARTITION and TRUNCATE on an in-process catalog: Doris's rules, the journal, and
storage following it (tablets created, dropped tablets' files deleted, replay agrees)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pyarrow as pa
import pytest

from catalog import partition_ddl
from catalog.catalog import Catalog
from catalog.errors import DorisError
from catalog.load import load_table
from server.parser.alter_table import parse_alter_table
from server.parser.create_table import parse_create_table
from server.parser.tokens import TokenCursor
from storage import StorageEngine

RANGE_TABLE = ("CREATE TABLE t (k INT NOT NULL, v INT) DUPLICATE KEY(k) PARTITION BY RANGE(k) ("
               'PARTITION p1 VALUES LESS THAN ("10"), PARTITION p2 VALUES LESS THAN ("20")) '
               'DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ("replication_num" = "1")')


def open_catalog(path: Path) -> Catalog:
    cat = Catalog(path / "meta", StorageEngine(str(path / "storage")), backend_num=3)
    cat.open()
    return cat


@pytest.fixture
def cat(tmp_path):
    c = open_catalog(tmp_path)
    c.create_database("db")
    c.create_table("db", parse_create_table(TokenCursor(RANGE_TABLE)))
    yield c
    c.close()


def alter(cat: Catalog, sql: str) -> None:
    stmt = parse_alter_table(TokenCursor(sql))
    if hasattr(stmt, "partition"):
        partition_ddl.add_partition(cat, "db", stmt)
    else:
        partition_ddl.drop_partition(cat, "db", stmt.table, stmt.name, stmt.if_exists,
                                     stmt.force)


def load(cat: Catalog, keys: list[int]) -> None:
    load_table(cat, "db", "t", pa.table({"k": pa.array(keys, pa.int32()),
                                         "v": pa.array(keys, pa.int32())}), datetime.now())


def parts(cat: Catalog) -> dict[str, tuple]:
    t = cat.get_table("db", "t")
    return {p.name: (p.lower, p.upper, p.buckets, p.visible_version) for p in t.partitions.values()}


def test_add_partition_less_than_fixed_and_buckets(cat):
    alter(cat, 'ALTER TABLE t ADD PARTITION p3 VALUES LESS THAN ("30") '
               "DISTRIBUTED BY HASH(k) BUCKETS 4")
    alter(cat, 'ALTER TABLE t ADD PARTITION p9 VALUES [("90"), ("100"))')
    got = parts(cat)
    assert got["p3"][:3] == (["20"], ["30"], 4) and got["p9"][:3] == (["90"], ["100"], 2)
    p3 = cat.get_table("db", "t").partition_by_name("p3")
    assert len(p3.tablets) == 4 and all(cat.engine.has_tablet(t) for t in p3.tablets)


@pytest.mark.parametrize("sql, message", [
    ('ALTER TABLE t ADD PARTITION px VALUES [("5"), ("15"))', "is intersected with range"),
    ('ALTER TABLE t ADD PARTITION p1 VALUES LESS THAN ("40")', "Duplicate partition name p1"),
    ('ALTER TABLE t ADD PARTITION p3 VALUES LESS THAN ("30") DISTRIBUTED BY RANDOM BUCKETS 2',
     "Cannot assign different distribution type. default is: HASH"),
    ('ALTER TABLE t ADD PARTITION p3 VALUES LESS THAN ("30") ("replication_num" = "4")',
     "Failed to find enough backend"),
    ('ALTER TABLE t ADD PARTITION p3 VALUES LESS THAN ("abc")', "Invalid"),
])
def test_add_partition_errors_change_nothing(cat, sql, message):
    before = parts(cat)
    with pytest.raises(DorisError, match=message):
        alter(cat, sql)
    assert parts(cat) == before


def test_if_not_exists_and_if_exists(cat):
    alter(cat, 'ALTER TABLE t ADD PARTITION IF NOT EXISTS p1 VALUES LESS THAN ("99")')
    alter(cat, "ALTER TABLE t DROP PARTITION IF EXISTS nope")
    with pytest.raises(DorisError) as e:
        alter(cat, "ALTER TABLE t DROP PARTITION nope")
    assert e.value.code == 1507 and e.value.message == "Error in list of partitions to nope"


def test_drop_partition_deletes_data_after_journal_and_replays(cat, tmp_path):
    load(cat, [1, 11])
    p1 = cat.get_table("db", "t").partition_by_name("p1")
    tablets = list(p1.tablets)
    alter(cat, "ALTER TABLE t DROP PARTITION p1 FORCE")
    assert sorted(parts(cat)) == ["p2"]
    assert not any(cat.engine.has_tablet(t) for t in tablets)
    assert not any((tmp_path / "storage" / "data" / str(t)).exists() for t in tablets)
    cat.close()
    again = open_catalog(tmp_path)
    assert sorted(p.name for p in again.get_table("db", "t").partitions.values()) == ["p2"]
    again.close()


def test_truncate_replaces_partitions_with_empty_ones(cat, tmp_path):
    load(cat, [1, 11])
    before = parts(cat)
    old = {p.name: p.partition_id for p in cat.get_table("db", "t").partitions.values()}
    old_tablets = list(cat.get_table("db", "t").partition_by_name("p1").tablets)
    partition_ddl.truncate(cat, "db", "t", ["p1"])
    after = parts(cat)
    assert after["p1"] == (before["p1"][0], before["p1"][1], 2, 1) and after["p2"] == before["p2"]
    assert cat.get_table("db", "t").partition_by_name("p1").partition_id != old["p1"]
    assert not any(cat.engine.has_tablet(t) for t in old_tablets)
    with pytest.raises(DorisError, match="Partition nope does not exist"):
        partition_ddl.truncate(cat, "db", "t", ["nope"])
    partition_ddl.truncate(cat, "db", "t", None)
    assert all(v[3] == 1 for v in parts(cat).values())
    expected = parts(cat)
    cat.close()
    again = open_catalog(tmp_path)
    t = again.get_table("db", "t")
    assert {p.name: (p.lower, p.upper, p.buckets, p.visible_version)
            for p in t.partitions.values()} == expected
    again.close()


def test_list_partition_conflicts(tmp_path):
    cat = open_catalog(tmp_path)
    cat.create_database("db")
    cat.create_table("db", parse_create_table(TokenCursor(
        "CREATE TABLE t (c VARCHAR(10) NOT NULL) DUPLICATE KEY(c) PARTITION BY LIST(c) ("
        'PARTITION pa VALUES IN ("a", "b")) DISTRIBUTED BY HASH(c) BUCKETS 1 '
        'PROPERTIES ("replication_num" = "1")')))
    with pytest.raises(DorisError, match=r'The partition key\[\("b"\)\] in partition item'):
        alter(cat, 'ALTER TABLE t ADD PARTITION pb VALUES IN ("b", "c")')
    alter(cat, 'ALTER TABLE t ADD PARTITION pc VALUES IN ("c")')
    assert sorted(parts(cat)) == ["pa", "pc"]
    cat.close()
