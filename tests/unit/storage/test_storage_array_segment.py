"""ARRAY columns in segment files: IPC pages (one or many), NULL and empty arrays, nested
arrays, row reads across pages, and zone maps that keep only has_null / has_not_null."""

import numpy as np
import pyarrow as pa
from storage_testutil import read_all, schema, write_and_open

from storage import DataType, TabletColumn
from storage.predicate import ColumnPredicate
from storage.segment import encoding

INT_ARRAY = DataType.array_of(DataType.of("INT"))
STR_ARRAY = DataType.array_of(DataType.of("VARCHAR", 20))
NESTED = DataType.array_of(INT_ARRAY)


def _schema():
    return schema([TabletColumn("k", DataType.of("INT"), True),
                   TabletColumn("a", INT_ARRAY, False), TabletColumn("s", STR_ARRAY, False),
                   TabletColumn("n", NESTED, False)])


def _table(n: int) -> pa.Table:
    k = np.arange(n)
    a = [None if i % 7 == 3 else [] if i % 5 == 1 else list(range(i % 4)) + [None] * (i % 2)
         for i in range(n)]
    s = [None if i % 11 == 0 else [f"v{i}", None, "x,y"][: i % 3 + 1] for i in range(n)]
    nested = [[[i], [], None] if i % 2 else None for i in range(n)]
    return pa.table({"k": pa.array(k, pa.int32()), "a": pa.array(a, INT_ARRAY.arrow()),
                     "s": pa.array(s, STR_ARRAY.arrow()), "n": pa.array(nested, NESTED.arrow())})


def test_array_columns_round_trip_in_one_page(tmp_path):
    table = _table(50)
    reader = write_and_open(tmp_path, _schema(), table)
    got, _ = read_all(reader)
    for name in table.column_names:
        assert got.column(name).combine_chunks().equals(table.column(name).combine_chunks())


def test_array_columns_round_trip_across_pages_and_row_reads(tmp_path):
    table = _table(20_000)
    reader = write_and_open(tmp_path, _schema(), table, page_size=4096)
    assert reader.columns["a"].num_pages > 1
    got, _ = read_all(reader)
    assert got.column("a").combine_chunks().equals(table.column("a").combine_chunks())
    # a key predicate narrows the rows: the array pages are cut to the same rows
    pred = ColumnPredicate("k", ">=", (19_990,))
    part, _ = read_all(reader, [pred], ["k", "s", "n"])
    assert part.column("s").to_pylist() == table.column("s").to_pylist()[19_990:]
    assert part.column("n").to_pylist() == table.column("n").to_pylist()[19_990:]


def test_array_pages_are_ipc_encoded_and_zone_maps_hold_no_values(tmp_path):
    page = encoding.encode(pa.array([[1, None], None, []], INT_ARRAY.arrow()), INT_ARRAY)
    assert page.encoding == encoding.IPC
    back = encoding.decode(page.encoding, page.has_nulls, pa.py_buffer(page.body()), 3,
                           INT_ARRAY)
    assert back.to_pylist() == [[1, None], None, []]
    reader = write_and_open(tmp_path, _schema(), _table(30))
    from storage.segment.column_reader import SegmentIO
    from storage.stats import ScanStats
    with SegmentIO(reader.path, 1, ScanStats()) as io:
        zones = reader.columns["a"].zone_maps(io)
    assert zones.mins.null_count == len(zones) and zones.maxs.null_count == len(zones)
    assert zones.has_null.all() and zones.has_not_null.all()
    is_null, _ = read_all(reader, [ColumnPredicate("a", "is_null", ())], ["k"])
    assert is_null.column("k").to_pylist() == [i for i in range(30) if i % 7 == 3]


def test_array_type_serialises_with_its_element():
    t = DataType.array_of(DataType.array_of(DataType.of("DECIMAL", 10, 2)))
    assert DataType.from_dict(t.to_dict()) == t
    assert t.sql() == "array<array<decimal(10,2)>>"
    assert t.desc_sql() == "ARRAY<ARRAY<DECIMAL(10, 2)>>"
    assert t.arrow() == pa.list_(pa.list_(pa.decimal128(10, 2)))
