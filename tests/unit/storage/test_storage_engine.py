"""StorageEngine: layout, drop, restore from journaled metas, orphan removal, concurrency."""

import json
import os
import threading

import pyarrow as pa
import pytest
from storage_testutil import column, schema

from storage import (ColumnPredicate, RowsetMeta, ScanStats, StorageEngine, StorageError,
                     TabletSchema)

SCHEMA = schema([column("k", "BIGINT", key=True), column("v", "BIGINT", agg="SUM")], "AGG_KEYS")


def batch(start: int, n: int, value: int = 1) -> pa.Table:
    return pa.table({"k": pa.array(range(start, start + n), pa.int64()),
                     "v": pa.array([value] * n, pa.int64())})


def count(tablet, version=10**9) -> int:
    return tablet.read(version, [], [], ScanStats()).num_rows


def test_layout_uses_integer_ids_only(tmp_path):
    engine = StorageEngine(str(tmp_path))
    tablet = engine.create_tablet(10001, SCHEMA)
    meta = tablet.publish(tablet.write_rowset(batch(0, 10), 1), 2)
    assert tablet.directory == os.path.join(str(tmp_path), "data", "10001")
    assert meta.segments == [f"{meta.rowset_id}_0.dat"]
    assert os.listdir(tablet.directory) == meta.segments
    for bad in ("../x", "1", 1.5, True, -1):
        with pytest.raises(StorageError):
            engine.create_tablet(bad, SCHEMA)
    with pytest.raises(StorageError, match="already exists"):
        engine.create_tablet(10001, SCHEMA)


def test_drop_removes_files(tmp_path):
    engine = StorageEngine(str(tmp_path))
    tablet = engine.create_tablet(7, SCHEMA)
    tablet.publish(tablet.write_rowset(batch(0, 10), 1), 2)
    engine.drop_tablet(7)
    assert not os.path.exists(tablet.directory)
    with pytest.raises(StorageError, match="does not exist"):
        engine.get_tablet(7)
    engine.drop_tablet(7)  # dropping again is harmless
    assert engine.tablet_ids() == []


def test_restart_restores_published_rowsets_and_removes_orphans(tmp_path):
    engine = StorageEngine(str(tmp_path))
    tablet = engine.create_tablet(3, SCHEMA)
    journal = []  # what the catalog would journal: schema + (meta dict, version)
    for version in (2, 3):
        meta = tablet.write_rowset(batch(0, 100, version), txn_id=version)
        journal.append((tablet.publish(meta, version).to_dict(), version))
    crashed = tablet.write_rowset(batch(1000, 50), txn_id=9)  # never published: a crash
    before = tablet.read(10, ["k", "v"], [], ScanStats())
    schema_json = json.dumps(SCHEMA.to_dict())

    restarted = StorageEngine(str(tmp_path))
    restored = restarted.restore_tablet(3, TabletSchema.from_dict(json.loads(schema_json)),
                                        [(RowsetMeta.from_dict(json.loads(json.dumps(m))), v)
                                         for m, v in journal])
    assert restarted.remove_orphans(3) == crashed.segments
    assert not os.path.exists(os.path.join(restored.directory, crashed.segments[0]))
    assert restored.read(10, ["k", "v"], [], ScanStats()).equals(before)
    assert restored.read(10, ["v"], [], ScanStats())["v"][0].as_py() == 5
    # replaying a publish is idempotent; new rowset ids never collide with old files
    restored.publish(RowsetMeta.from_dict(journal[0][0]), 2)
    fresh = restored.write_rowset(batch(0, 1), txn_id=10)
    assert fresh.rowset_id > crashed.rowset_id


def test_remove_orphans_spares_rowsets_being_written(tmp_path):
    engine = StorageEngine(str(tmp_path))
    tablet = engine.create_tablet(4, SCHEMA)
    pending = tablet.write_rowset(batch(0, 10), txn_id=1)
    assert engine.remove_orphans(4) == []
    tablet.publish(pending, 2)
    assert count(tablet) == 10


def test_rowset_meta_json_round_trip():
    meta = RowsetMeta(5, 6, 7, 100, 4096, ["5_0.dat", "5_1.dat"], [60, 40], 3, 3)
    assert RowsetMeta.from_dict(json.loads(json.dumps(meta.to_dict()))) == meta


def test_readers_see_whole_versions_while_loads_publish(tmp_path):
    engine = StorageEngine(str(tmp_path), page_size=4096)
    tablet = engine.create_tablet(8, SCHEMA)
    loads, size = 12, 500
    errors = []
    done = threading.Event()

    def reader():
        while not done.is_set():
            version = tablet.max_version
            rows = tablet.read(version, ["k", "v"], [ColumnPredicate("k", ">=", (0,))],
                               ScanStats())
            total = sum(rows["v"].to_pylist())
            if total != size * max(0, version - 1):
                errors.append((version, total))

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    for version in range(2, 2 + loads):
        tablet.publish(tablet.write_rowset(batch(0, size), txn_id=version), version)
    done.set()
    for t in threads:
        t.join()
    assert errors == []
    assert count(tablet) == size
