"""Partition pruning (planner/prune_partitions.py) through the planner API: bind a SELECT over
an in-process catalog and look at which partitions its scan kept."""

from __future__ import annotations

import pytest
import sqlglot

from catalog.catalog import Catalog
from planner import logical as L
from planner.binder import BindContext, bind_query
from planner.naming import NameGen
from planner.prune_partitions import ValueSet
from server.parser.create_table import parse_create_table
from server.parser.tokens import TokenCursor
from storage import StorageEngine

TABLES = [
    "CREATE TABLE r (k INT, v INT) DUPLICATE KEY(k) PARTITION BY RANGE(k) ("
    'PARTITION p1 VALUES LESS THAN ("10"), PARTITION p2 VALUES LESS THAN ("20"), '
    'PARTITION p3 VALUES LESS THAN ("30"), PARTITION p4 VALUES LESS THAN (MAXVALUE)) '
    'DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ("replication_num" = "1")',
    "CREATE TABLE d (dt DATE, v INT) DUPLICATE KEY(dt) PARTITION BY RANGE(dt) ("
    'PARTITION p0529 VALUES [("2020-05-29"), ("2020-05-30")), '
    'PARTITION p0530 VALUES [("2020-05-30"), ("2020-05-31")), '
    'PARTITION p0601 VALUES [("2020-06-01"), ("2020-06-02"))) '
    'DISTRIBUTED BY HASH(dt) BUCKETS 1 PROPERTIES ("replication_num" = "1")',
    "CREATE TABLE m (a INT, b INT, v INT) DUPLICATE KEY(a, b) PARTITION BY RANGE(a, b) ("
    'PARTITION p1 VALUES LESS THAN ("10", "5"), PARTITION p2 VALUES LESS THAN ("20")) '
    'DISTRIBUTED BY HASH(a) BUCKETS 1 PROPERTIES ("replication_num" = "1")',
    "CREATE TABLE l (c VARCHAR(10), n INT, v INT) DUPLICATE KEY(c, n) PARTITION BY LIST(c, n) ("
    'PARTITION pa VALUES IN (("a", "1"), ("b", "2")), PARTITION pc VALUES IN (("c", "3")), '
    'PARTITION pnull VALUES IN ((NULL, "4"))) '
    'DISTRIBUTED BY HASH(c) BUCKETS 1 PROPERTIES ("replication_num" = "1")',
]


@pytest.fixture(scope="module")
def cat(tmp_path_factory):
    path = tmp_path_factory.mktemp("prune")
    c = Catalog(path / "meta", StorageEngine(str(path / "storage")), backend_num=1)
    c.open()
    c.create_database("db")
    for sql in TABLES:
        c.create_table("db", parse_create_table(TokenCursor(sql)))
    yield c
    c.close()


def scan_of(plan: object) -> L.OlapScan:
    while not isinstance(plan, L.OlapScan):
        plan = next(getattr(plan, a) for a in ("input", "left") if hasattr(plan, a))
    return plan


def selected(cat: Catalog, sql: str) -> list[str]:
    plan, _ = bind_query(sqlglot.parse_one(sql, read="doris"), BindContext(cat, "db", NameGen()))
    scan = scan_of(plan)
    table = cat.get_table("db", scan.table)
    ids = {t.partition_id for t in scan.tablets}
    assert scan.partitions_selected == len(ids)
    assert scan.partitions_total == len(table.partitions)
    return sorted(table.partitions[i].name for i in ids)


@pytest.mark.parametrize("where, expected", [
    ("k = 15", ["p2"]),
    ("k IN (1, 25, 99)", ["p1", "p3", "p4"]),
    ("k BETWEEN 10 AND 20", ["p2", "p3"]),
    ("k < 10", ["p1"]),
    ("k <= 10", ["p1", "p2"]),
    ("k > 29", ["p4"]),
    ("k >= 20 AND k < 30", ["p3"]),
    ("k = 5 AND k = 15", []),
    ("k IS NULL", ["p1"]),
    ("k IS NOT NULL", ["p1", "p2", "p3", "p4"]),
    ("k != 15", ["p1", "p2", "p3", "p4"]),
    ("v = 15", ["p1", "p2", "p3", "p4"]),
    ("k + 1 = 16", ["p1", "p2", "p3", "p4"]),
])
def test_range_int(cat, where, expected):
    assert selected(cat, f"SELECT * FROM r WHERE {where}") == expected


@pytest.mark.parametrize("where, expected", [
    ("dt = '2020-05-30'", ["p0530"]),
    ("dt BETWEEN '2020-05-30' AND '2020-06-01'", ["p0530", "p0601"]),
    ("dt > '2020-05-30'", ["p0601"]),
    ("dt IN ('2020-05-31')", []),  # the hole between p0530 and p0601
])
def test_range_date(cat, where, expected):
    assert selected(cat, f"SELECT v FROM d WHERE {where}") == expected


def test_multi_column_range_prunes_on_the_first_column(cat):
    assert selected(cat, "SELECT * FROM m WHERE a = 10") == ["p1", "p2"]  # [MIN, (10, 5)) holds 10
    assert selected(cat, "SELECT * FROM m WHERE a = 15") == ["p2"]
    assert selected(cat, "SELECT * FROM m WHERE b = 1") == ["p1", "p2"]


@pytest.mark.parametrize("where, expected", [
    ("c = 'a'", ["pa"]),
    ("c IN ('b', 'c')", ["pa", "pc"]),
    ("c = 'a' AND n = 2", []),
    ("n = 4", ["pnull"]),
    ("c IS NULL", ["pnull"]),
    ("c > 'b'", ["pc"]),
])
def test_list(cat, where, expected):
    assert selected(cat, f"SELECT * FROM l WHERE {where}") == expected


def test_join_prunes_each_side(cat):
    plan, _ = bind_query(sqlglot.parse_one(
        "SELECT * FROM r JOIN d ON r.v = d.v WHERE r.k = 5 AND d.dt = '2020-06-01'", read="doris"),
        BindContext(cat, "db", NameGen()))
    scans = []

    def walk(node):
        if isinstance(node, L.OlapScan):
            scans.append(node)
        for attr in ("input", "left", "right"):
            if getattr(node, attr, None) is not None:
                walk(getattr(node, attr))
    walk(plan)
    assert sorted(s.partitions_selected for s in scans) == [1, 1]


def test_value_set_intersections():
    vs = ValueSet()
    vs.add(">=", (10,))
    vs.add(">", (10,))
    vs.add("<", (20,))
    assert not vs.admits(10) and vs.admits(11) and not vs.admits(20) and not vs.admits(None)
    assert vs.lo == (11, True)  # k > 10 on integers is k >= 11
    assert vs.meets(0, (11, False), holds_null=True) is False  # [0, 11): nothing above 10
    assert vs.meets(0, (12, False), holds_null=False)
    assert vs.meets(None, None, holds_null=True)
