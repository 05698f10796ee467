"""Merge-on-write tablets: the delete bitmap computed at publish, versioned reads without key
merging, the sequence column and the delete sign, compaction's re-base, restore."""

import pyarrow as pa
import pytest
from storage_testutil import column, table_for

from storage import ColumnPredicate as P
from storage import ScanStats, StorageEngine, TabletSchema
from storage.delete_bitmap import decode_entries
from storage.schema import DELETE_SIGN

SEQ = "__DORIS_SEQUENCE_COL__"


def mow_schema(seq: bool = False, sign: bool = False, mow: bool = True) -> TabletSchema:
    cols = [column("k", "INT", key=True), column("v", "BIGINT")]
    if sign:
        cols.append(column(DELETE_SIGN, "TINYINT", nullable=False))
    if seq:
        cols.append(column(SEQ, "INT"))
    return TabletSchema(cols, "UNIQUE_KEYS", sequence_column=SEQ if seq else None,
                        merge_on_write=mow)


@pytest.fixture(params=[0, 64 << 20], ids=["no-page-cache", "page-cache"])
def engine(tmp_path, request):
    return StorageEngine(str(tmp_path), page_size=4096, short_key_interval=16,
                         page_cache_bytes=request.param)


def write(tablet, rows: dict):
    n = len(rows["k"])
    data = dict(rows)
    for c in tablet.schema.columns:
        if c.name == DELETE_SIGN and c.name not in data:
            data[c.name] = [0] * n
        if c.name == SEQ and c.name not in data:
            data[c.name] = [None] * n
    return tablet.write_rowset(table_for(tablet.schema, data), txn_id=1)


def load(tablet, version, rows: dict):
    meta = write(tablet, rows)
    tablet.prepare_publish(meta, version)
    return tablet.publish(meta, version)


def read(tablet, version=10**9, preds=(), stats=None):
    cols = ["k", "v"]
    t = tablet.read(version, cols, list(preds), stats or ScanStats())
    return sorted(zip(t.column("k").to_pylist(), t.column("v").to_pylist()),
                  key=lambda r: (r[0] is not None, r[0]))


def test_later_load_deletes_older_rows_without_merging(engine):
    t = engine.create_tablet(1, mow_schema())
    load(t, 2, {"k": [1, 2, 3], "v": [10, 20, 30]})
    meta = load(t, 3, {"k": [2, 3, 4], "v": [21, 31, 41]})
    entries = decode_entries(meta.delete_bitmap)
    assert [(e.segment_no, e.version, list(e.rows)) for e in entries] == [(0, 3, [1, 2])]
    stats = ScanStats()
    assert read(t, stats=stats) == [(1, 10), (2, 21), (3, 31), (4, 41)]
    assert stats.rows_merged == 0 and stats.rows_del_filtered == 2
    # a snapshot at the first version does not apply the second version's bitmap
    assert read(t, 2) == [(1, 10), (2, 20), (3, 30)]


def test_value_predicates_see_only_live_rows(engine):
    t = engine.create_tablet(1, mow_schema())
    load(t, 2, {"k": [1, 2], "v": [5, 5]})
    load(t, 3, {"k": [1], "v": [6]})
    assert read(t, preds=[P("v", "=", (5,))]) == [(2, 5)]
    assert read(t, preds=[P("v", "=", (6,))]) == [(1, 6)]
    assert read(t, 2, preds=[P("v", "=", (5,))]) == [(1, 5), (2, 5)]


def test_null_keys_are_equal(engine):
    t = engine.create_tablet(1, mow_schema())
    load(t, 2, {"k": [None, 1], "v": [1, 2]})
    load(t, 3, {"k": [None], "v": [3]})
    assert read(t) == [(None, 3), (1, 2)]


def test_sequence_column_decides_and_ties_go_to_the_later_load(engine):
    t = engine.create_tablet(1, mow_schema(seq=True))
    load(t, 2, {"k": [1, 2, 3, 4], "v": [10, 20, 30, 40], SEQ: [5, 5, 5, None]})
    meta = load(t, 3, {"k": [1, 2, 3, 4], "v": [11, 21, 31, 41], SEQ: [4, 5, 6, None]})
    # k=1: the new row is smaller and is itself deleted; k=2 tie: new wins; k=4 NULL tie: new
    assert read(t) == [(1, 10), (2, 21), (3, 31), (4, 41)]
    entries = {(e.rowset_id, e.segment_no): list(e.rows) for e in decode_entries(meta.delete_bitmap)}
    assert entries[(meta.rowset_id, 0)] == [0]
    # a third load against the surviving row of each key
    load(t, 4, {"k": [1, 3], "v": [12, 32], SEQ: [5, 5]})
    assert read(t) == [(1, 12), (2, 21), (3, 31), (4, 41)]
    assert read(t, 3) == [(1, 10), (2, 21), (3, 31), (4, 41)]


def test_delete_sign_row_hides_the_key_and_a_later_load_brings_it_back(engine):
    t = engine.create_tablet(1, mow_schema(sign=True))
    load(t, 2, {"k": [1, 2], "v": [1, 2]})
    load(t, 3, {"k": [1], "v": [1], DELETE_SIGN: [1]})
    live = [P(DELETE_SIGN, "=", (0,))]
    assert read(t, preds=live) == [(2, 2)]
    load(t, 4, {"k": [1], "v": [7]})
    assert read(t, preds=live) == [(1, 7), (2, 2)]
    assert read(t, 3, preds=live) == [(2, 2)]


def test_overlapping_rowset_later_flush_wins(engine):
    t = engine.create_tablet(1, mow_schema())
    load(t, 2, {"k": [1, 2, 3], "v": [1, 2, 3]})
    w = t.open_rowset_writer(5)
    w.flush(table_for(t.schema, {"k": [2, 4], "v": [20, 40]}))
    w.flush(table_for(t.schema, {"k": [4, 3], "v": [41, 30]}))
    meta = w.finish()
    assert meta.overlapping
    t.prepare_publish(meta, 3)
    t.publish(meta, 3)
    assert read(t) == [(1, 1), (2, 20), (3, 30), (4, 41)]


def test_delete_predicate_between_loads(engine):
    t = engine.create_tablet(1, mow_schema(seq=True))
    load(t, 2, {"k": [1, 2], "v": [1, 2], SEQ: [9, 9]})
    d = t.write_delete([P("k", "=", (1,))], 3)
    t.publish(d, 3)
    # the older row of k=1 is gone: a smaller sequence value no longer loses to it
    load(t, 4, {"k": [1, 2], "v": [10, 20], SEQ: [1, 1]})
    assert read(t) == [(1, 10), (2, 2)]


def test_compaction_drops_deleted_rows_and_rebases_later_entries(engine):
    t = engine.create_tablet(1, mow_schema())
    load(t, 2, {"k": [1, 2, 3, 4], "v": [1, 2, 3, 4]})
    load(t, 3, {"k": [2, 3], "v": [20, 30]})
    load(t, 4, {"k": [3, 5], "v": [300, 500]})
    inputs = t.rowsets()[:2]
    held = t.capture(3)  # an old snapshot keeps reading the inputs
    out = t.compact(inputs, 9)
    assert out.num_rows == 4  # 1, 2(20), 3(30), 4 live at version 3
    # a load published while the compaction ran
    load(t, 5, {"k": [1, 4], "v": [100, 400]})
    t.carry_delete_bitmap(out, inputs)
    assert t.replace_rowsets([r.rowset_id for r in inputs], out)
    assert read(t) == [(1, 100), (2, 20), (3, 300), (4, 400), (5, 500)]
    assert read(t, 4) == [(1, 1), (2, 20), (3, 300), (4, 4), (5, 500)]
    got = held.read(["k", "v"], [], ScanStats())
    assert sorted(got.column("k").to_pylist()) == [1, 2, 3, 4]
    assert sorted(got.column("v").to_pylist()) == [1, 4, 20, 30]
    held.release()
    carried = {(e.rowset_id, e.version) for e in decode_entries(out.delete_bitmap)}
    assert carried == {(out.rowset_id, 4), (out.rowset_id, 5)}
    # a later load against the compacted rowset
    load(t, 6, {"k": [2], "v": [2000]})
    assert read(t) == [(1, 100), (2, 2000), (3, 300), (4, 400), (5, 500)]


def test_restore_from_journaled_metas_gives_the_same_bitmap(engine, tmp_path):
    t = engine.create_tablet(1, mow_schema(seq=True))
    metas = [load(t, 2, {"k": [1, 2, 3], "v": [1, 2, 3], SEQ: [1, 1, 1]}),
             load(t, 3, {"k": [2, 3], "v": [20, 30], SEQ: [2, 0]}),
             load(t, 4, {"k": [1], "v": [10], SEQ: [1]})]
    before = [(e.rowset_id, e.segment_no, e.version, list(e.rows))
              for e in t.delete_bitmap.entries()]
    other = StorageEngine(str(tmp_path), page_size=4096, short_key_interval=16)
    other._tablets.clear()
    restored = other.restore_tablet(1, mow_schema(seq=True),
                                    [(type(m).from_dict(m.to_dict()), m.end_version)
                                     for m in metas])
    after = [(e.rowset_id, e.segment_no, e.version, list(e.rows))
             for e in restored.delete_bitmap.entries()]
    assert after == before
    # without the journaled entries (an older data directory): recomputed, the same
    bare = []
    for m in metas:
        d = m.to_dict()
        d.pop("delete_bitmap")
        bare.append((type(m).from_dict(d), m.end_version))
    third = StorageEngine(str(tmp_path), page_size=4096, short_key_interval=16)
    again = third.restore_tablet(1, mow_schema(seq=True), bare)
    assert [(e.rowset_id, e.segment_no, e.version, list(e.rows))
            for e in again.delete_bitmap.entries()] == before
    assert read(again) == [(1, 10), (2, 20), (3, 3)]


def test_merge_on_read_tablet_keeps_merging(engine):
    t = engine.create_tablet(1, mow_schema(mow=False))
    load(t, 2, {"k": [1, 2], "v": [1, 2]})
    load(t, 3, {"k": [1], "v": [10]})
    stats = ScanStats()
    assert read(t, stats=stats) == [(1, 10), (2, 2)]
    assert stats.rows_merged == 1
    assert t.delete_bitmap.cardinality() == 0


def test_scan_unit_applies_each_snapshots_bitmap(engine):
    from storage.scan_unit import eligible, read_unit
    tablets = [engine.create_tablet(i, mow_schema()) for i in (1, 2)]
    for i, t in enumerate(tablets):
        load(t, 2, {"k": list(range(i, 40, 2)), "v": list(range(20))})
        load(t, 3, {"k": list(range(i, 20, 2)), "v": [100] * 10})
    snaps = [t.capture(3) for t in tablets] + [tablets[0].capture(2)]
    assert all(eligible(s) for s in snaps)
    stats = ScanStats()
    table, counts = read_unit(snaps, ["k", "v"], [P("v", ">=", (5,))], stats)
    one_by_one = [s.read(["k", "v"], [P("v", ">=", (5,))], ScanStats()) for s in snaps]
    assert counts.tolist() == [t.num_rows for t in one_by_one]
    assert table.to_pylist() == pa.concat_tables(one_by_one).to_pylist()
    assert stats.rows_del_filtered == 20
    for s in snaps:
        s.release()
