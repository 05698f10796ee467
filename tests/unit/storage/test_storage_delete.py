"""DELETE versions: a delete rowset removes matching rows of older rowsets only."""

import json

import pytest
from storage_testutil import column, table_for

from storage import ColumnPredicate, RowsetMeta, ScanStats, StorageEngine, TabletSchema
from storage.errors import StorageError

DUP = TabletSchema([column("k", "INT", key=True), column("v", "INT"), column("s", "VARCHAR", 5)],
                   "DUP_KEYS")
AGG = TabletSchema([column("k", "INT", key=True), column("v", "BIGINT", agg="SUM")], "AGG_KEYS")


def _read(tablet, version, columns, preds=()):
    stats = ScanStats()
    table = tablet.read(version, columns, list(preds), stats)
    return [tuple(r.values()) for r in table.to_pylist()], stats


def _load(tablet, sch, data, version):
    tablet.publish(tablet.write_rowset(table_for(sch, data), version), version)


def _delete(tablet, preds, version):
    tablet.publish(tablet.write_delete(preds, version), version)


@pytest.fixture
def engine(tmp_path):
    return StorageEngine(str(tmp_path), page_size=64)


def test_delete_affects_only_rows_loaded_before_it(engine):
    t = engine.create_tablet(1, DUP)
    _load(t, DUP, {"k": [1, 2, 3, 4], "v": [10, 20, None, 40], "s": ["a", "b", "c", "d"]}, 2)
    _delete(t, [ColumnPredicate("k", ">=", (2,)), ColumnPredicate("v", "!=", (40,))], 3)
    _load(t, DUP, {"k": [2, 5], "v": [20, 50], "s": ["x", "y"]}, 4)
    assert _read(t, 2, ["k"])[0] == [(1,), (2,), (3,), (4,)]
    rows, stats = _read(t, 3, ["k", "v"])
    assert rows == [(1, 10), (3, None), (4, 40)]  # NULL != 40 is not true: row 3 stays
    assert stats.rows_del_filtered == 1
    rows, stats = _read(t, 4, ["k", "s"])
    assert sorted(rows) == [(1, "a"), (2, "x"), (3, "c"), (4, "d"), (5, "y")]
    assert _read(t, 4, [])[0] == [()] * 5  # count(*) sees the delete too
    rows, _ = _read(t, 4, ["s"], [ColumnPredicate("k", "=", (2,))])
    assert rows == [("x",)]


def test_delete_on_an_aggregate_table_removes_whole_key_groups_before_merging(engine):
    t = engine.create_tablet(2, AGG)
    _load(t, AGG, {"k": [1, 2], "v": [5, 6]}, 2)
    _load(t, AGG, {"k": [1, 2], "v": [1, 1]}, 3)
    _delete(t, [ColumnPredicate("k", "in", (1,))], 4)
    _load(t, AGG, {"k": [1], "v": [100]}, 5)
    assert _read(t, 3, ["k", "v"])[0] == [(1, 6), (2, 7)]
    assert _read(t, 4, ["k", "v"])[0] == [(2, 7)]
    assert _read(t, 5, ["k", "v"])[0] == [(1, 100), (2, 7)]


def test_segments_the_delete_cannot_match_are_not_decoded_for_it(engine):
    t = engine.create_tablet(3, DUP)
    _load(t, DUP, {"k": list(range(100)), "v": list(range(100)), "s": ["a"] * 100}, 2)
    _delete(t, [ColumnPredicate("k", ">", (1000,))], 3)
    rows, stats = _read(t, 3, ["k"])
    assert len(rows) == 100 and stats.rows_del_filtered == 0
    assert stats.pages_total == t._segments(t.rowsets()[0])[0].columns["k"].num_pages


def test_delete_rowsets_round_trip_through_json(engine):
    t = engine.create_tablet(4, DUP)
    meta = t.write_delete([ColumnPredicate("s", "in", ("a", "b")),
                           ColumnPredicate("v", "is_null")], 1)
    again = RowsetMeta.from_dict(json.loads(json.dumps(meta.to_dict())))
    assert again == meta and again.is_delete and again.num_rows == 0 and again.segments == []
    with pytest.raises(StorageError):
        t.write_delete([ColumnPredicate("nope", "=", (1,))], 2)


def test_engine_restore_replays_deletes(tmp_path):
    engine = StorageEngine(str(tmp_path))
    t = engine.create_tablet(5, DUP)
    _load(t, DUP, {"k": [1, 2], "v": [1, 2], "s": ["a", "b"]}, 2)
    _delete(t, [ColumnPredicate("s", "=", ("a",))], 3)
    published = [(RowsetMeta.from_dict(r.to_dict()), r.start_version) for r in t.rowsets()]
    again = StorageEngine(str(tmp_path)).restore_tablet(5, DUP, published)
    assert _read(again, 3, ["k"])[0] == [(2,)]
