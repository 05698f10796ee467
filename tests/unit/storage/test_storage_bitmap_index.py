"""Bitmap index (seed 003 §5): dictionary + bitmaps, lookups per operator, scans, side files."""

import datetime as dt
import operator
import os
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest
from pyroaring import BitMap
from storage_testutil import column, read_all, table_for, write_and_open

from storage import ColumnPredicate, DataType, ScanStats, StorageEngine, TabletSchema
from storage.errors import CorruptionError
from storage.segment import bitmap_index, page, side_index
from storage.segment.bitmap_index import rows_of


def test_the_seed_example():
    values = ["x", "x", "y", "y", "y", "z", "y", "x", "z", "x"]
    uniq, blobs = bitmap_index.build(pa.array(values), DataType.of("VARCHAR", 5))
    assert uniq.to_pylist() == ["x", "y", "z"]
    assert [list(BitMap.deserialize(b)) for b in blobs] == [[0, 1, 7, 9], [2, 3, 4, 6], [5, 8], []]


def _index(values, dtype, page_size=64):
    """An index written to memory pages and read back through a loader (several pages)."""
    pages: list[bytes] = []

    def write_page(data: bytes):
        pages.append(data)
        return len(pages) - 1, len(data)

    meta = bitmap_index.write(pa.array(values, dtype.arrow()), dtype, page_size, True, write_page)

    def load(pointer, page_type):
        return page.parse(pa.py_buffer(pages[pointer[0]]), page_type, {})

    return bitmap_index.BitmapIndex(meta, dtype, len(values)), load, meta


@pytest.mark.parametrize("op", ["=", "!=", "<", "<=", ">", ">=", "in"])
def test_lookups_match_sql_semantics(op):
    rng = np.random.default_rng(1)
    values = [None if x == 0 else int(x) for x in rng.integers(0, 40, 500)]
    index, load, meta = _index(values, DataType.of("INT"))
    assert len(meta["dict_pages"]) > 1 and len(meta["bitmap_pages"]) > 1
    for probe in [-5, 0, 1, 17, 18, 39, 40, 100]:
        args = [probe, probe + 3, 1000] if op == "in" else [probe]
        got = list(rows_of(index.lookup(op, args, load)))
        pyop = {"=": int.__eq__, "!=": int.__ne__, "<": int.__lt__, "<=": int.__le__,
                ">": int.__gt__, ">=": int.__ge__}.get(op)
        want = [i for i, v in enumerate(values) if v is not None and
                (v in args if op == "in" else pyop(v, probe))]
        assert got == want, (op, probe)


def test_strings_dates_decimals_and_all_null():
    cases = [
        (DataType.of("VARCHAR", 8), ["b", "a", None, "ab", "b", ""], "<", "ab"),
        (DataType.of("DATE"), [dt.date(2020, 1, d) for d in (3, 1, 2, 1)], ">=",
         dt.date(2020, 1, 2)),
        (DataType.of("DECIMAL", 6, 2), [Decimal("1.50"), Decimal("-2.00"), None], "!=",
         Decimal("1.50")),
        (DataType.of("INT"), [None, None], "!=", 1),
    ]
    for dtype, values, op, probe in cases:
        index, load, _ = _index(values, dtype)
        got = list(rows_of(index.lookup(op, [probe], load)))
        fn = {"<": operator.lt, ">=": operator.ge, "!=": operator.ne}[op]
        assert got == [i for i, v in enumerate(values) if v is not None and fn(v, probe)], dtype


def _schema(bitmap=None):
    cols = [column("k", "INT", key=True), column("c", "VARCHAR", 10), column("v", "INT")]
    return TabletSchema(cols, "DUP_KEYS", bitmap_indexes=bitmap or {})


def _data(n=20000):
    rng = np.random.default_rng(5)
    cats = [f"cat{int(x):02d}" for x in rng.integers(0, 50, n)]
    cats[::997] = [None] * len(cats[::997])
    return {"k": list(range(n)), "c": cats, "v": [int(x) for x in rng.integers(0, 1000, n)]}


def test_segment_scan_counts_bitmap_filtered_rows(tmp_path):
    data = _data()
    sch = _schema({"c": 1})
    reader = write_and_open(tmp_path, sch, table_for(sch, data), page_size=4096)
    got, stats = read_all(reader, [ColumnPredicate("c", "=", ("cat07",))], ["k", "v"])
    want = [i for i, c in enumerate(data["c"]) if c == "cat07"]
    assert got.column("k").to_pylist() == want
    assert stats.rows_bitmap_index_filtered == len(data["k"]) - len(want)
    assert stats.rows_read == len(want) and stats.rows_conditions_filtered == 0
    got, stats = read_all(reader, [ColumnPredicate("c", "in", ("cat01", "cat02")),
                                   ColumnPredicate("v", "<", (100,))], ["k"])
    assert got.column("k").to_pylist() == [i for i, (c, v) in enumerate(zip(data["c"], data["v"]))
                                           if c in ("cat01", "cat02") and v < 100]
    assert stats.rows_total == stats.rows_bitmap_index_filtered + stats.rows_read + \
        stats.rows_zone_map_filtered


def test_side_index_files_are_built_used_and_removed(tmp_path):
    engine = StorageEngine(str(tmp_path), page_size=4096)
    tablet = engine.create_tablet(7, _schema())
    data = _data()
    tablet.publish(tablet.write_rowset(table_for(_schema(), data), 1), 2)
    pred = [ColumnPredicate("c", "=", ("cat09",))]
    stats = ScanStats()
    before = tablet.read(2, ["k"], pred, stats)
    assert stats.rows_bitmap_index_filtered == 0
    assert tablet.build_bitmap_index("c", 55) > 0
    (name,) = [n for n in os.listdir(tablet.directory) if n.endswith(".idx")]
    assert side_index.parse_file_name(name)[2] == 55
    assert tablet.remove_orphans() == [name]  # the schema does not name index 55 yet
    tablet.build_bitmap_index("c", 55)
    tablet.set_schema(_schema({"c": 55}))
    assert tablet.remove_orphans() == []
    stats = ScanStats()
    assert tablet.read(2, ["k"], pred, stats) == before
    assert stats.rows_bitmap_index_filtered > 0.9 * len(data["k"])
    # a new load writes the index inside its segment: no side file for it
    tablet.publish(tablet.write_rowset(table_for(_schema(), data), 2), 3)
    assert len([n for n in os.listdir(tablet.directory) if n.endswith(".idx")]) == 1
    tablet.set_schema(_schema())  # DROP INDEX: side files go, in-file indexes are ignored
    assert not [n for n in os.listdir(tablet.directory) if n.endswith(".idx")]
    stats = ScanStats()
    assert tablet.read(3, ["k"], pred, stats).num_rows == 2 * before.num_rows
    assert stats.rows_bitmap_index_filtered == 0


def test_a_damaged_bitmap_page_is_reported(tmp_path):
    data = _data(3000)
    sch = _schema({"c": 1})
    reader = write_and_open(tmp_path, sch, table_for(sch, data))
    offset, size, _ = reader.columns["c"].meta["bitmap_index"]["bitmap_pages"][0]
    with open(reader.path, "r+b") as f:
        f.seek(offset + size - 3)
        f.write(b"\xff")
    with pytest.raises(CorruptionError, match="column c"):
        read_all(reader, [ColumnPredicate("c", "=", ("cat01",))], ["k"])
