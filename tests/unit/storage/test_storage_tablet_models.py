"""Tablets: write/publish/read and the data models (seed 004, DORIS-SEMANTICS)."""

import datetime as dt
import os

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from storage_testutil import column, schema, table_for

from storage import ColumnPredicate as P
from storage import ScanStats, StorageEngine, StorageError

D, T = dt.date, dt.datetime

USER_SCHEMA = schema([
    column("user_id", "LARGEINT", key=True), column("date", "DATE", key=True),
    column("city", "VARCHAR", 20, key=True), column("age", "SMALLINT", key=True),
    column("sex", "TINYINT", key=True), column("last_visit_date", "DATETIME", agg="REPLACE"),
    column("cost", "BIGINT", agg="SUM"), column("max_dwell_time", "INT", agg="MAX"),
    column("min_dwell_time", "INT", agg="MIN")], "AGG_KEYS")

SEED_ROWS = [
    (10000, D(2017, 10, 1), "北京", 20, 0, T(2017, 10, 1, 6, 0, 0), 20, 10, 10),
    (10000, D(2017, 10, 1), "北京", 20, 0, T(2017, 10, 1, 7, 0, 0), 15, 2, 2),
    (10001, D(2017, 10, 1), "北京", 30, 1, T(2017, 10, 1, 17, 5, 45), 2, 22, 22),
    (10002, D(2017, 10, 2), "上海", 20, 1, T(2017, 10, 2, 12, 59, 12), 200, 5, 5),
    (10003, D(2017, 10, 2), "广州", 32, 0, T(2017, 10, 2, 11, 20, 0), 30, 11, 11),
    (10004, D(2017, 10, 1), "深圳", 35, 0, T(2017, 10, 1, 10, 0, 15), 100, 3, 3),
    (10004, D(2017, 10, 3), "深圳", 35, 0, T(2017, 10, 3, 10, 20, 22), 11, 6, 6),
]


def rows_table(sch, rows):
    return table_for(sch, {c.name: [r[i] for r in rows] for i, c in enumerate(sch.columns)})


def load(tablet, rows, version, sch=None):
    meta = tablet.write_rowset(rows_table(sch or tablet.schema, rows), txn_id=version)
    return tablet.publish(meta, version)


def read(tablet, version=10**9, columns=None, preds=(), stats=None):
    stats = stats if stats is not None else ScanStats()
    cols = tablet.schema.names if columns is None else columns
    return tablet.read(version, cols, list(preds), stats)


@pytest.fixture
def engine(tmp_path):
    return StorageEngine(str(tmp_path), page_size=4096, short_key_interval=16)


def test_seed_004_aggregate_example_merges_within_one_load(engine):
    tablet = engine.create_tablet(1, USER_SCHEMA)
    meta = load(tablet, SEED_ROWS, 2)
    assert meta.num_rows == 6  # pre-aggregated before writing
    rows = read(tablet).to_pylist()
    assert len(rows) == 6
    first = rows[0]
    assert first["user_id"] == 10000
    assert first["last_visit_date"] == T(2017, 10, 1, 7, 0, 0)
    assert (first["cost"], first["max_dwell_time"], first["min_dwell_time"]) == (35, 10, 2)
    assert rows[1:] == rows_table(USER_SCHEMA, SEED_ROWS[2:]).to_pylist()


def test_seed_004_second_load_merges_on_read(engine):
    tablet = engine.create_tablet(1, USER_SCHEMA)
    load(tablet, SEED_ROWS, 2)
    load(tablet, [(10004, D(2017, 10, 3), "深圳", 35, 0, T(2017, 10, 3, 11, 22, 0), 44, 19, 19),
                  (10005, D(2017, 10, 3), "长沙", 29, 1, T(2017, 10, 3, 18, 11, 2), 3, 1, 1)], 3)
    stats = ScanStats()
    rows = read(tablet, stats=stats).to_pylist()
    assert len(rows) == 7 and stats.rows_merged == 1 and stats.rowsets_read == 2
    merged = rows[5]
    assert merged["user_id"] == 10004 and merged["date"] == D(2017, 10, 3)
    assert merged["last_visit_date"] == T(2017, 10, 3, 11, 22, 0)
    assert (merged["cost"], merged["max_dwell_time"], merged["min_dwell_time"]) == (55, 19, 6)
    assert len(read(tablet, version=2)) == 6  # the snapshot before the second load


BATCH_SCHEMA = schema([column("user_id", "LARGEINT", key=True), column("date", "DATE", key=True),
                       column("cost", "BIGINT", agg="SUM")], "AGG_KEYS")


def test_seed_004_count_star_and_min_of_a_sum_column(engine):
    tablet = engine.create_tablet(2, BATCH_SCHEMA)
    load(tablet, [(10001, D(2017, 11, 20), 50), (10002, D(2017, 11, 21), 39)], 2)
    load(tablet, [(10001, D(2017, 11, 20), 1), (10001, D(2017, 11, 21), 5),
                  (10003, D(2017, 11, 22), 22)], 3)
    assert read(tablet, columns=[]).num_rows == 4              # count(*): 4, not 5 or 3
    assert read(tablet, columns=["user_id"]).num_rows == 4     # merged on all keys anyway
    assert pc.min(read(tablet, columns=["cost"])["cost"]).as_py() == 5  # not 1
    rows = read(tablet).to_pylist()
    assert [(r["user_id"], r["cost"]) for r in rows] == [(10001, 51), (10001, 5), (10002, 39),
                                                         (10003, 22)]


def test_value_predicates_apply_after_merging(engine):
    tablet = engine.create_tablet(3, BATCH_SCHEMA)
    load(tablet, [(1, D(2020, 1, 1), 5)], 2)
    load(tablet, [(1, D(2020, 1, 1), 6)], 3)
    stats = ScanStats()
    assert read(tablet, preds=[P("cost", "=", (5,))], stats=stats).num_rows == 0
    assert stats.pages_zone_map_filtered == 0 and stats.rows_value_filtered == 1
    assert read(tablet, preds=[P("cost", "=", (11,))]).to_pylist()[0]["cost"] == 11
    # one rowset: already merged, so value predicates may use the segment's indexes
    assert read(tablet, version=2, preds=[P("cost", "=", (5,))]).num_rows == 1


def test_key_predicates_are_pushed_into_segments_on_merge(engine):
    tablet = engine.create_tablet(4, BATCH_SCHEMA)
    load(tablet, [(i, D(2020, 1, 1), 1) for i in range(2000)], 2)
    load(tablet, [(i, D(2020, 1, 1), 2) for i in range(0, 2000, 2)], 3)
    stats = ScanStats()
    rows = read(tablet, columns=["cost"], preds=[P("user_id", "=", (1000,))], stats=stats)
    assert rows.to_pylist() == [{"cost": 3}]
    assert stats.rows_short_key_filtered == 2998 and stats.rows_read == 2


UNIQUE = schema([column("k", "INT", key=True), column("v", "VARCHAR", 10),
                 column("n", "INT")], "UNIQUE_KEYS")


def test_unique_last_row_wins_within_and_across_loads(engine):
    tablet = engine.create_tablet(5, UNIQUE)
    load(tablet, [(1, "a", 1), (2, "b", 2), (1, "c", 3)], 2)
    assert read(tablet).to_pylist() == [{"k": 1, "v": "c", "n": 3}, {"k": 2, "v": "b", "n": 2}]
    load(tablet, [(2, None, 20), (3, "d", None)], 3)
    assert read(tablet).to_pylist() == [{"k": 1, "v": "c", "n": 3},
                                        {"k": 2, "v": None, "n": 20},
                                        {"k": 3, "v": "d", "n": None}]
    # an overwritten old value never matches
    assert read(tablet, preds=[P("v", "=", ("b",))]).num_rows == 0


def test_duplicate_model_keeps_every_row(engine):
    sch = schema([column("k", "INT", key=True), column("v", "INT")], "DUP_KEYS")
    tablet = engine.create_tablet(6, sch)
    load(tablet, [(2, 1), (1, 1), (2, 1)], 2)
    load(tablet, [(1, 1)], 3)
    assert read(tablet, version=2).to_pylist() == [{"k": 1, "v": 1}, {"k": 2, "v": 1},
                                                   {"k": 2, "v": 1}]  # sorted in the rowset
    assert read(tablet).num_rows == 4 and read(tablet, columns=[]).num_rows == 4


def test_replace_null_versus_replace_if_not_null_and_null_handling(engine):
    sch = schema([column("k", "INT", key=True), column("r", "INT", agg="REPLACE"),
                  column("rn", "INT", agg="REPLACE_IF_NOT_NULL"), column("s", "INT", agg="SUM"),
                  column("mx", "INT", agg="MAX"), column("mn", "VARCHAR", 5, agg="MIN")],
                 "AGG_KEYS")
    tablet = engine.create_tablet(7, sch)
    load(tablet, [(1, 10, 10, None, None, "b"), (2, 1, 1, 4, 4, None)], 2)
    load(tablet, [(1, None, None, None, 3, None), (2, 2, None, None, None, "z")], 3)
    rows = read(tablet).to_pylist()
    assert rows[0] == {"k": 1, "r": None, "rn": 10, "s": None, "mx": 3, "mn": "b"}
    assert rows[1] == {"k": 2, "r": 2, "rn": 1, "s": 4, "mx": 4, "mn": "z"}
    # the same inside one load
    tablet = engine.create_tablet(8, sch)
    meta = load(tablet, [(1, 10, 10, None, None, "b"), (1, None, None, None, 3, None)], 2)
    assert meta.num_rows == 1
    assert read(tablet).to_pylist()[0] == {"k": 1, "r": None, "rn": 10, "s": None, "mx": 3,
                                           "mn": "b"}


def test_null_keys_merge_with_each_other(engine):
    sch = schema([column("k1", "INT", key=True), column("k2", "VARCHAR", 5, key=True),
                  column("s", "BIGINT", agg="SUM")], "AGG_KEYS")
    tablet = engine.create_tablet(9, sch)
    load(tablet, [(None, None, 1), (None, "a", 1), (None, None, 2)], 2)
    load(tablet, [(None, None, 4), (1, None, 8)], 3)
    assert read(tablet).to_pylist() == [{"k1": None, "k2": None, "s": 7},
                                        {"k1": None, "k2": "a", "s": 1},
                                        {"k1": 1, "k2": None, "s": 8}]
    assert read(tablet, preds=[P("k1", "is_null")]).num_rows == 2


def test_integer_sum_wraps_and_keeps_the_column_type(engine):
    sch = schema([column("k", "INT", key=True), column("s", "TINYINT", agg="SUM")], "AGG_KEYS")
    tablet = engine.create_tablet(10, sch)
    load(tablet, [(1, 100), (1, 100)], 2)
    got = read(tablet)
    assert got.schema.field("s").type == pa.int8() and got["s"][0].as_py() == -56


def test_publish_is_idempotent_and_versions_are_exclusive(engine):
    tablet = engine.create_tablet(11, UNIQUE)
    meta = tablet.write_rowset(rows_table(UNIQUE, [(1, "a", 1)]), txn_id=7)
    assert meta.start_version is None and meta.txn_id == 7
    assert read(tablet).num_rows == 0  # pending: invisible
    first = tablet.publish(meta, 2)
    assert tablet.publish(meta, 2) == first and first.start_version == first.end_version == 2
    with pytest.raises(StorageError):
        tablet.publish(meta, 3)
    other = tablet.write_rowset(rows_table(UNIQUE, [(2, "b", 2)]), txn_id=8)
    with pytest.raises(StorageError):
        tablet.publish(other, 2)
    assert [r.end_version for r in tablet.rowsets()] == [2] and tablet.max_version == 2
    os.remove(os.path.join(tablet.directory, other.segments[0]))
    with pytest.raises(StorageError, match="lacks segment"):
        tablet.publish(other, 3)


def test_several_segments_per_rowset(tmp_path):
    engine = StorageEngine(str(tmp_path), page_size=1024, max_segment_size=64 * 1024)
    sch = schema([column("k", "BIGINT", key=True), column("v", "VARCHAR", 100)], "DUP_KEYS")
    n = 20_000
    tablet = engine.create_tablet(12, sch)
    data = pa.table({"k": pa.array(range(n), pa.int64()),
                     "v": pa.array([f"row number {i:08d}" for i in range(n)])})
    meta = tablet.publish(tablet.write_rowset(data, 1), 2)
    assert len(meta.segments) > 5 and sum(meta.segment_rows) == n
    assert all(os.path.getsize(os.path.join(tablet.directory, s)) <= 64 * 1024
               for s in meta.segments)
    assert read(tablet).equals(data)
    stats = ScanStats()
    assert read(tablet, preds=[P("k", "=", (12_345,))], stats=stats).num_rows == 1
    assert stats.segments_filtered == len(meta.segments) - 1


def test_bad_loads_change_nothing(engine):
    sch = schema([column("k", "INT", key=True), column("v", "INT", nullable=False)])
    tablet = engine.create_tablet(13, sch)
    with pytest.raises(StorageError, match="NOT NULL"):
        tablet.write_rowset(pa.table({"k": [1], "v": pa.array([None], pa.int32())}), 1)
    with pytest.raises(StorageError, match="lack"):
        tablet.write_rowset(pa.table({"k": [1]}), 1)
    with pytest.raises(StorageError):
        tablet.write_rowset(pa.table({"k": [1], "v": ["not a number"]}), 1)
    assert os.listdir(tablet.directory) == []
    empty = tablet.publish(tablet.write_rowset(pa.table({"k": pa.array([], pa.int32()),
                                                         "v": pa.array([], pa.int32())}), 2), 2)
    assert empty.num_rows == 0 and empty.segments == [] and read(tablet).num_rows == 0
    with pytest.raises(StorageError, match="Unknown column"):
        read(tablet, columns=["nope"])


def test_projection_order_and_extra_load_columns(engine):
    tablet = engine.create_tablet(14, UNIQUE)
    data = pa.table({"n": [5], "extra": ["ignored"], "v": ["x"], "k": [1]})
    tablet.publish(tablet.write_rowset(data, 1), 2)
    got = read(tablet, columns=["n", "k", "n"])
    assert got.column_names == ["n", "k", "n"] and got.to_pylist() == [{"n": 5, "k": 1}]
