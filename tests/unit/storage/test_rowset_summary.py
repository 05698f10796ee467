"""The summary a tablet keeps of its published rowsets (storage/rowset_summary.py): extended by
one on each appending publish, walked afresh after any other change, always equal to a fresh
walk of the rowsets a capture returns."""

import random

from storage_testutil import column, schema, table_for

from storage import ColumnPredicate as P
from storage import StorageEngine
from storage.rowset_summary import RowsetSummary

AGG = schema([column("k", "INT", key=True, nullable=False), column("v", "BIGINT", agg="SUM")],
             "AGG_KEYS")


def _publish(tablet, rows, version):
    data = table_for(tablet.schema, {"k": [r[0] for r in rows], "v": [r[1] for r in rows]})
    tablet.publish(tablet.write_rowset(data, txn_id=version), version)


def _checked(tablet, version):
    snap = tablet.capture(version)
    try:
        assert snap.summary == RowsetSummary.of(snap.rowsets)
        return snap.summary
    finally:
        snap.release()


def test_summary_follows_publishes_compactions_and_deletes(tmp_path):
    tablet = StorageEngine(str(tmp_path)).create_tablet(1, AGG)
    rng = random.Random(7)
    version = 1
    for _ in range(12):
        version += 1
        _publish(tablet, [(rng.randrange(50), rng.randrange(9)) for _ in range(rng.randrange(1, 20))],
                 version)
        _checked(tablet, version)
    summary = _checked(tablet, version)
    assert len(summary.data) == 12 and summary.deletes == 0
    assert summary.rows == sum(r.num_rows for r in tablet.rowsets())
    # an older snapshot gets its own walk, not the latest list's summary
    assert _checked(tablet, 5).rows < summary.rows
    inputs = [r for r in tablet.rowsets() if r.start_version >= 6]
    assert tablet.replace_rowsets([r.rowset_id for r in inputs],
                                  tablet.compact(inputs, txn_id=100))
    after = _checked(tablet, version)
    assert len(after.data) == 5 and after.segmented == 5
    version += 1
    tablet.publish(tablet.write_delete([P("k", "=", [3])], txn_id=101), version)
    assert _checked(tablet, version).deletes == 1
    version += 1
    _publish(tablet, [(1, 1)], version)
    assert len(_checked(tablet, version).data) == 6


def test_plus_equals_a_walk():
    class R:  # the fields the summary reads
        def __init__(self, rows, load_file=None, segments=(), overlapping=False, delete=None):
            self.num_rows, self.load_file, self.segments = rows, load_file, list(segments)
            self.overlapping, self.delete_predicate = overlapping, delete
    rng = random.Random(3)
    rowsets = [R(rng.choice([0, 5, 70_000]), rng.choice([None, "f.arrow"]),
                 rng.choice([(), ("s.dat",)]), rng.random() < 0.2,
                 rng.choice([None, None, [{"c": 1}]])) for _ in range(200)]
    summary = RowsetSummary()
    for i, r in enumerate(rowsets):
        summary = summary.plus(r)
        assert summary == RowsetSummary.of(rowsets[:i + 1])
