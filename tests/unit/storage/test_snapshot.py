"""Snapshot reads (storage/snapshot.py): a captured version keeps reading the same rowsets
across compaction swaps; stale rowsets' files live exactly as long as a snapshot holds them."""

import gc
import os

import pyarrow as pa
import pytest
from storage_testutil import column, schema

from storage import ScanStats, StorageEngine, StorageError
from storage.rowset import RowsetMeta
from storage.snapshot import version_path

SCHEMA = schema([column("k", "BIGINT", key=True), column("v", "BIGINT", agg="SUM")], "AGG_KEYS")


def load(tablet, version, k, v):
    meta = tablet.write_rowset(pa.table({"k": pa.array([k], pa.int64()),
                                         "v": pa.array([v], pa.int64())}), version)
    return tablet.publish(meta, version)


def total(snapshot_or_tablet, version=None):
    stats = ScanStats()
    t = snapshot_or_tablet.read(["v"], [], stats) if version is None else \
        snapshot_or_tablet.read(version, ["v"], [], stats)
    return sum(t.column("v").to_pylist())


def test_a_snapshot_survives_a_compaction_swap_and_frees_the_inputs_when_released(tmp_path):
    tablet = StorageEngine(str(tmp_path)).create_tablet(1, SCHEMA)
    inputs = [load(tablet, v, k=v % 2, v=v) for v in range(2, 6)]
    snap = tablet.capture(4)  # versions 2..4
    assert [r.end_version for r in snap.rowsets] == [2, 3, 4] and total(snap) == 9
    output = tablet.compact(inputs, txn_id=99)
    assert tablet.replace_rowsets([r.rowset_id for r in inputs], output)
    assert [(r.start_version, r.end_version) for r in tablet.rowsets()] == [(2, 5)]
    # the swap moved the inputs to stale; three are held, the fourth is gone already
    assert [r.end_version for r in tablet.stale_rowsets()] == [2, 3, 4]
    assert set(tablet.held_rowsets()) == {r.rowset_id for r in inputs[:3]}
    assert total(snap) == 9  # still version 4, not the merged [2-5]
    # a new capture at version 4 walks the stale path; at 5 it takes the merged rowset
    with tablet.capture(4) as again:
        assert total(again) == 9
    assert total(tablet, 5) == 14
    snap.release()
    snap.release()  # idempotent
    assert tablet.stale_rowsets() == [] and tablet.held_rowsets() == {}
    assert sorted(os.listdir(tablet.directory)) == output.segments
    with pytest.raises(StorageError, match="released"):
        snap.read(["v"], [], ScanStats())
    with pytest.raises(StorageError, match="version already merged"):
        tablet.capture(3)


def test_a_dropped_snapshot_is_released_by_its_finalizer(tmp_path):
    tablet = StorageEngine(str(tmp_path)).create_tablet(1, SCHEMA)
    inputs = [load(tablet, v, k=1, v=1) for v in range(2, 5)]
    snap = tablet.capture(4)
    tablet.replace_rowsets([r.rowset_id for r in inputs], tablet.compact(inputs, 9))
    assert len(tablet.stale_rowsets()) == 3
    del snap
    gc.collect()
    assert tablet.stale_rowsets() == [] and tablet.held_rowsets() == {}


def test_version_path_prefers_the_widest_rowsets():
    def rs(i, start, end):
        return RowsetMeta(i, 1, i, 1, 1, start_version=start, end_version=end)
    live = [rs(10, 0, 9), rs(11, 10, 10)]
    stale = [rs(1, 0, 4), rs(2, 5, 7), rs(3, 5, 5), rs(4, 6, 6), rs(5, 7, 7), rs(6, 8, 9)]
    assert [r.rowset_id for r in version_path(live, stale, 10)] == [10, 11]
    assert [r.rowset_id for r in version_path(live, stale, 7)] == [1, 2]
    assert [r.rowset_id for r in version_path(live, stale, 6)] == [1, 3, 4]
