"""Light schema change in storage: rowsets written under an older schema read through the new
one by column unique id (storage/column_mapping.py); compaction writes the new schema."""

from dataclasses import replace

import pytest
from storage_testutil import column, table_for

from storage import ColumnPredicate, ScanStats, StorageEngine, TabletSchema


def _uid(col, uid, default=None):
    return replace(col, unique_id=uid, default=default)


# the table before any schema change: no unique ids
V0 = TabletSchema([column("k", "INT", key=True), column("v", "INT"), column("s", "VARCHAR", 5)],
                  "DUP_KEYS")
ORIGIN = {0: "k", 1: "v", 2: "s"}
# ADD COLUMN c INT DEFAULT "7", DROP COLUMN s, RENAME v -> w
V1 = TabletSchema([_uid(column("k", "INT", key=True), 0), _uid(column("w", "INT"), 1),
                   _uid(column("c", "INT"), 3, "7")], "DUP_KEYS", origin_names=ORIGIN)
# then ADD COLUMN s again: a new column (id 4), not the dropped one
V2 = TabletSchema([*V1.columns, _uid(column("s", "VARCHAR", 5), 4)], "DUP_KEYS",
                  origin_names=ORIGIN)


def _read(tablet, version, columns, preds=()):
    table = tablet.read(version, columns, list(preds), ScanStats())
    return [tuple(r.values()) for r in table.to_pylist()]


@pytest.fixture
def tablet(tmp_path):
    t = StorageEngine(str(tmp_path), page_size=64).create_tablet(1, V0)
    t.publish(t.write_rowset(table_for(V0, {"k": [1, 2, 3], "v": [10, 20, 30],
                                            "s": ["a", "b", "c"]}), 2), 2)
    return t


def test_old_rowsets_read_through_the_new_schema(tablet):
    tablet.set_schema(V1)
    tablet.publish(tablet.write_rowset(table_for(V1, {"k": [4], "w": [40], "c": [8]}), 3), 3)
    assert tablet.rowsets()[-1].column_ids == {"k": 0, "w": 1, "c": 3}
    assert _read(tablet, 3, ["k", "w", "c"]) == [(1, 10, 7), (2, 20, 7), (3, 30, 7), (4, 40, 8)]
    # predicates on a renamed column are pushed down under its stored name; on an added
    # column they see the default
    assert _read(tablet, 3, ["k"], [ColumnPredicate("w", ">=", (20,))]) == [(2,), (3,), (4,)]
    assert _read(tablet, 3, ["k"], [ColumnPredicate("c", "=", (7,))]) == [(1,), (2,), (3,)]
    tablet.set_schema(V2)
    assert _read(tablet, 3, ["k", "s"]) == [(1, None), (2, None), (3, None), (4, None)]


def test_delete_before_a_rename_applies_to_older_rows(tablet):
    tablet.publish(tablet.write_delete([ColumnPredicate("v", "=", (20,))], 3), 3)
    tablet.set_schema(V1)
    assert _read(tablet, 3, ["k", "w"]) == [(1, 10), (3, 30)]


def test_compaction_writes_the_new_schema(tablet):
    tablet.set_schema(V1)
    tablet.publish(tablet.write_rowset(table_for(V1, {"k": [4], "w": [40], "c": [8]}), 3), 3)
    inputs = tablet.rowsets()
    out = tablet.compact(inputs, 9)
    assert tablet.replace_rowsets([r.rowset_id for r in inputs], out)
    assert out.column_ids == {"k": 0, "w": 1, "c": 3}
    assert _read(tablet, 3, ["k", "w", "c"]) == [(1, 10, 7), (2, 20, 7), (3, 30, 7), (4, 40, 8)]
