"""Compaction of rollup tablets: each index's rowsets merge by that index's own keys and
aggregation (a rollup of an AGGREGATE table sums what its fewer keys group), reads do not
change, a restart sees the compacted state; compaction waits while an ADD ROLLUP job runs."""

from __future__ import annotations

from datetime import datetime

import pyarrow as pa

from test_compaction import NOW, open_catalog

from catalog.catalog import Catalog
from catalog.compaction import compact_all
from catalog.load import load_table
from catalog.rollup_job import RollupJob
from server.parser.create_table import parse_create_table
from server.parser.tokens import TokenCursor
from storage import ScanStats

DDL = ("CREATE TABLE t (k1 INT NOT NULL, k2 INT NOT NULL, v BIGINT SUM) AGGREGATE KEY(k1, k2) "
       "DISTRIBUTED BY HASH(k1) BUCKETS 1 ROLLUP (r (k2, v)) "
       'PROPERTIES ("replication_num" = "1")')


def rollup_tablet(cat: Catalog):
    table = cat.get_table("db", "t")
    p = next(iter(table.partitions.values()))
    index = table.index_by_name("r")
    return cat.engine.get_tablet(p.tablets_by_index[index.index_id][0]), p.visible_version


def rollup_rows(cat: Catalog) -> list[tuple]:
    tablet, version = rollup_tablet(cat)
    t = tablet.read(version, ["k2", "v"], [], ScanStats())
    return sorted(zip(t.column("k2").to_pylist(), t.column("v").to_pylist()))


def loaded_catalog(tmp_path) -> Catalog:
    """db.t (with rollup r) after six loads of two rows."""
    cat = open_catalog(tmp_path)
    cat.create_database("db")
    cat.create_table("db", parse_create_table(TokenCursor(DDL)))
    for i in range(6):
        load_table(cat, "db", "t", pa.table({"k1": [i, i + 10], "k2": [i % 2, 1],
                                             "v": pa.array([1, 2], pa.int64())}), datetime.now())
    return cat


def test_rollup_tablets_compact_by_their_own_keys(tmp_path):
    cat = loaded_catalog(tmp_path)
    expected = [(0, 3), (1, 15)]
    assert rollup_rows(cat) == expected
    tablet, _ = rollup_tablet(cat)
    assert len(tablet.rowsets()) == 6

    # A running job on the table holds compaction back.
    cat.alter_jobs[1] = RollupJob(1, "db", cat.get_table("db", "t").table_id, "t", 0, "t", 0,
                                  "x", 0, 0.0)
    assert compact_all(cat, NOW) == 0
    del cat.alter_jobs[1]

    assert compact_all(cat, NOW) >= 2  # the base tablet and the rollup tablet
    tablet, _ = rollup_tablet(cat)
    assert len(tablet.rowsets()) == 1
    # merged by the rollup's key k2 alone: two rows, summed
    assert tablet.rowsets()[0].num_rows == 2
    assert rollup_rows(cat) == expected
    cat.close()

    cat = open_catalog(tmp_path)
    assert rollup_rows(cat) == expected
    tablet, _ = rollup_tablet(cat)
    assert len(tablet.rowsets()) == 1
    cat.close()


def test_a_scan_served_by_a_rollup_reads_the_rollup_tablets_captured_at_bind(tmp_path):
    # the snapshot of a query covers the rollup tablets it may read: compaction and loads
    # after the bind change nothing the query sees
    import sqlglot

    from planner import logical as L
    from planner.binder import BindContext, bind_query
    from planner.naming import NameGen
    cat = loaded_catalog(tmp_path)
    ctx = BindContext(cat, "db", NameGen())
    plan, _ = bind_query(sqlglot.parse_one("SELECT k2, sum(v) FROM t GROUP BY k2", read="doris"), ctx)
    while not isinstance(plan, L.OlapScan):  # one table: the scan is at the bottom
        plan = plan.input
    scans = [plan]
    assert scans[0].index_name == "r"
    tablet, version = rollup_tablet(cat)
    [scanned] = scans[0].tablets
    assert scanned.tablet_id == tablet.tablet_id and scanned.snapshot is not None
    load_table(cat, "db", "t", pa.table({"k1": [1], "k2": [0], "v": pa.array([100], pa.int64())}),
               datetime.now())
    assert compact_all(cat, NOW) >= 2
    t = scanned.snapshot.read(["k2", "v"], [], ScanStats())
    assert sorted(zip(t.column("k2").to_pylist(), t.column("v").to_pylist())) == [(0, 3), (1, 15)]
    for s in ctx.snapshots:
        s.release()
    cat.close()
