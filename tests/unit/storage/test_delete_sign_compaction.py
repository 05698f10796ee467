"""The delete sign through compaction (storage/compaction.py): a cumulative compaction keeps
the keys whose merged sign is 1 (older rowsets outside it may hold the key), a compaction from
the tablet's first rowset drops them; the sequence column decides before the sign is looked at.
Reads that filter the sign as the planner does give the same rows before and after."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from storage import ColumnPredicate, ScanStats, StorageEngine
from storage.schema import DELETE_SIGN, SEQUENCE_COL, VERSION_COL, TabletSchema
from tests.unit.storage.storage_testutil import column

SCHEMA = TabletSchema([column("k", "INT", key=True, nullable=False), column("v", "INT"),
                       column(DELETE_SIGN, "TINYINT", nullable=False),
                       column(SEQUENCE_COL, "INT")], "UNIQUE_KEYS", sequence_column=SEQUENCE_COL)
LIVE = [ColumnPredicate(DELETE_SIGN, "=", (0,))]


def load(tablet, version: int, rows: list[tuple]):
    k, v, sign, seq = zip(*rows)
    data = pa.table({"k": pa.array(k, pa.int32()), "v": pa.array(v, pa.int32()),
                     DELETE_SIGN: pa.array(sign, pa.int8()), SEQUENCE_COL: pa.array(seq, pa.int32())})
    return tablet.publish(tablet.write_rowset(data, txn_id=version), version)


def visible(tablet, version: int, predicates=LIVE) -> list[tuple]:
    rows = tablet.read(version, ["k", "v", DELETE_SIGN], predicates, ScanStats())
    return sorted(zip(*(rows.column(c).to_pylist() for c in rows.column_names)))


def compact(tablet, inputs):
    output = tablet.compact(inputs, txn_id=99)
    assert tablet.replace_rowsets([r.rowset_id for r in inputs], output)
    return output


def test_cumulative_keeps_deleted_keys_base_drops_them(tmp_path):
    tablet = StorageEngine(str(tmp_path)).create_tablet(1, SCHEMA)
    first = load(tablet, 2, [(1, 10, 0, 1), (2, 20, 0, 1), (3, 30, 0, 1)])
    second = load(tablet, 3, [(1, 0, 1, 1), (4, 40, 0, 1)])          # delete key 1
    third = load(tablet, 4, [(2, 0, 1, 0), (3, 31, 0, 2)])           # key 2's delete loses
    expected = [(2, 20, 0), (3, 31, 0), (4, 40, 0)]
    assert visible(tablet, 4) == expected
    # cumulative: versions 3-4 only; the delete row of key 1 must stay to hide version 2's row
    out = compact(tablet, [second, third])
    assert out.num_rows == 4
    assert visible(tablet, 4) == expected
    assert (1, 0, 1) in visible(tablet, 4, [])
    # base: from the first rowset, the deleted key is gone for good
    out = compact(tablet, [first, out])
    assert visible(tablet, 4) == expected
    assert visible(tablet, 4, []) == expected and out.num_rows == 3


def test_merge_rows_base_flag_only_drops_signed_rows():
    from storage.compaction import merge_rows
    rows = pa.table({"k": pa.array([1, 1, 2], pa.int32()), "v": pa.array([1, 2, 3], pa.int32()),
                     DELETE_SIGN: pa.array([0, 1, 0], pa.int8()),
                     SEQUENCE_COL: pa.array([1, 1, 1], pa.int32())})
    assert merge_rows([rows], SCHEMA).num_rows == 2
    merged = merge_rows([rows], SCHEMA, base=True)
    assert merged.column("k").to_pylist() == [2]
    assert pc.sum(merged.column(DELETE_SIGN)).as_py() == 0


def test_version_column_is_the_load_version_and_compaction_keeps_it(tmp_path):
    sch = TabletSchema([column("k", "INT", key=True, nullable=False), column("v", "INT"),
                        column(VERSION_COL, "BIGINT", nullable=False)], "UNIQUE_KEYS")
    tablet = StorageEngine(str(tmp_path)).create_tablet(1, sch)
    metas = []
    for version, keys in ((2, [1, 2, 3]), (3, [2]), (4, [3, 4])):
        data = pa.table({"k": pa.array(keys, pa.int32()), "v": pa.array(keys, pa.int32()),
                         VERSION_COL: pa.array([0] * len(keys), pa.int64())})
        metas.append(tablet.publish(tablet.write_rowset(data, txn_id=version), version))

    def versions(predicates=()):
        rows = tablet.read(4, ["k", VERSION_COL], list(predicates), ScanStats())
        return sorted(zip(rows.column("k").to_pylist(), rows.column(VERSION_COL).to_pylist()))
    expected = [(1, 2), (2, 3), (3, 4), (4, 4)]
    assert versions() == expected
    assert versions([ColumnPredicate(VERSION_COL, "=", (4,))]) == [(3, 4), (4, 4)]
    compact(tablet, metas)
    assert [(r.start_version, r.end_version) for r in tablet.rowsets()] == [(2, 4)]
    assert versions() == expected
    assert versions([ColumnPredicate(VERSION_COL, "<", (4,))]) == [(1, 2), (2, 3)]
