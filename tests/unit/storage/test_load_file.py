"""Load files: a small load's rows for many tablets in one file, each tablet's rowset a slice."""

import os

import pyarrow as pa
import pytest
from storage_testutil import column, schema, table_for

from storage import ColumnPredicate as P
from storage import RowsetMeta, ScanStats, StorageEngine
from storage.memtable import flush_grouped

AGG = schema([column("k", "INT", key=True), column("v", "BIGINT", agg="SUM")], "AGG_KEYS")


@pytest.fixture
def engine(tmp_path):
    return StorageEngine(str(tmp_path))


def write_load(engine, txn_id, rows, groups, tablet_ids):
    """What catalog/load.py does for a small load: one file, one slice per tablet."""
    data = table_for(AGG, {"k": [r[0] for r in rows], "v": [r[1] for r in rows]})
    flushed, group_col = flush_grouped(data, AGG, pa.array(groups, pa.int64()))
    name = f"{txn_id}_1.arrow"
    size = engine.load_files.write(name, flushed)
    g = group_col.to_pylist()
    metas = []
    for i, tid in enumerate(tablet_ids):
        start, count = g.index(i), g.count(i)
        metas.append(engine.get_tablet(tid).adopt_load_slice(name, start, count, size, txn_id))
    return name, metas


def read(tablet, version=10**9, preds=()):
    return tablet.read(version, ["k", "v"], list(preds), ScanStats()).to_pylist()


def test_slices_merge_per_tablet_and_read_like_segments(engine):
    a, b = engine.create_tablet(1, AGG), engine.create_tablet(2, AGG)
    _, (ma, mb) = write_load(engine, 5, [(1, 10), (7, 1), (1, 5), (3, 3)], [0, 1, 0, 0], [1, 2])
    assert (ma.num_rows, mb.num_rows) == (2, 1)  # pre-aggregated per tablet: k=1 merged
    assert read(a) == []  # pending
    a.publish(ma, 2), b.publish(mb, 2)
    assert read(a) == [{"k": 1, "v": 15}, {"k": 3, "v": 3}]
    assert read(b) == [{"k": 7, "v": 1}]
    _, (ma2,) = write_load(engine, 6, [(1, 100), (9, 9)], [0, 0], [1])
    a.publish(ma2, 3)
    assert read(a) == [{"k": 1, "v": 115}, {"k": 3, "v": 3}, {"k": 9, "v": 9}]
    assert read(a, version=2) == [{"k": 1, "v": 15}, {"k": 3, "v": 3}]
    assert read(a, preds=[P("k", ">=", (3,))]) == [{"k": 3, "v": 3}, {"k": 9, "v": 9}]


def test_deletes_between_slices_apply_only_to_older_rows(engine):
    t = engine.create_tablet(1, AGG)
    _, (m1,) = write_load(engine, 5, [(1, 1), (2, 2)], [0, 0], [1])
    t.publish(m1, 2)
    t.publish(t.write_delete([P("k", "=", (1,))], 6), 3)
    _, (m2,) = write_load(engine, 7, [(1, 10)], [0], [1])
    t.publish(m2, 4)
    _, (m3,) = write_load(engine, 8, [(2, 20)], [0], [1])
    t.publish(m3, 5)
    assert read(t) == [{"k": 1, "v": 10}, {"k": 2, "v": 22}]


def test_file_goes_when_no_rowset_reads_it_and_restore_reopens_it(engine, tmp_path):
    a, b = engine.create_tablet(1, AGG), engine.create_tablet(2, AGG)
    name, (ma, mb) = write_load(engine, 5, [(1, 1), (2, 2)], [0, 1], [1, 2])
    pa_, pb = a.publish(ma, 2), b.publish(mb, 2)
    path = engine.load_files.path(name)
    # A restart: the catalog hands the published rowsets back (journal form).
    again = StorageEngine(str(tmp_path))
    ra = again.restore_tablet(1, AGG, [(RowsetMeta.from_dict(pa_.to_dict()), 2)])
    again.restore_tablet(2, AGG, [(RowsetMeta.from_dict(pb.to_dict()), 2)])
    assert again.remove_unreferenced_load_files() == []
    assert read(ra) == [{"k": 1, "v": 1}]
    engine.drop_tablet(1)
    assert os.path.exists(path)  # tablet 2 still reads it
    engine.drop_tablet(2)
    assert not os.path.exists(path)


def test_an_aborted_load_leaves_no_file(engine):
    a = engine.create_tablet(1, AGG)
    name, (ma,) = write_load(engine, 5, [(1, 1)], [0], [1])
    a.abort_rowset(ma)
    assert not os.path.exists(engine.load_files.path(name))
    write_load(engine, 6, [(1, 1)], [0], [1])
    fresh = StorageEngine(engine.root_dir)  # a crash before publish: nothing references it
    assert fresh.remove_unreferenced_load_files() == ["6_1.arrow"]


def test_a_dropped_tablet_keeps_its_files_while_a_snapshot_reads_them(engine):
    """DROP, TRUNCATE, INSERT OVERWRITE's and a schema change's swap drop tablets that queries
    captured a moment before: their segments and load file slices stay until released."""
    a = engine.create_tablet(1, AGG)
    name, (ma,) = write_load(engine, 5, [(1, 1), (2, 2)], [0, 0], [1])
    a.publish(ma, 2)
    a.publish(a.write_rowset(table_for(AGG, {"k": [3], "v": [30]}), 6), 3)
    path = engine.load_files.path(name)
    snap, idle = a.capture(3), a.capture(3)
    idle.release()
    engine.drop_tablet(1)
    assert not engine.has_tablet(1)
    assert os.path.exists(path) and os.path.isdir(a.directory)
    rows = snap.read(["k", "v"], [], ScanStats()).to_pylist()
    assert rows == [{"k": 1, "v": 1}, {"k": 2, "v": 2}, {"k": 3, "v": 30}]
    snap.release()
    assert not os.path.exists(path) and not os.path.exists(a.directory)
    # dropped at once when nothing holds it
    b = engine.create_tablet(2, AGG)
    b.publish(b.write_rowset(table_for(AGG, {"k": [1], "v": [1]}), 7), 2)
    engine.drop_tablet(2)
    assert not os.path.exists(b.directory)


def test_a_dropped_tablet_s_files_go_when_its_last_snapshot_is_collected(engine):
    import gc
    import time

    a = engine.create_tablet(1, AGG)
    a.publish(a.write_rowset(table_for(AGG, {"k": [1], "v": [1]}), 5), 2)
    snap = a.capture(2)
    engine.drop_tablet(1)
    assert os.path.isdir(a.directory)
    del snap
    gc.collect()  # its finalizer hands it to the sweeper thread (storage/stale_sweeper.py)
    deadline = time.monotonic() + 10
    while os.path.exists(a.directory) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not os.path.exists(a.directory)
