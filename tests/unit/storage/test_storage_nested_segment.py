"""MAP and STRUCT columns in segment files: IPC pages (one or many), NULL and empty values,
nesting with ARRAY, row reads across pages, zone maps without values, and the types' journal
form and spellings."""

import pyarrow as pa
from storage_testutil import read_all, schema, write_and_open

from storage import DataType, TabletColumn
from storage.predicate import ColumnPredicate
from storage.segment import encoding
from storage.types import StructField, from_arrow

MAP = DataType.map_of(DataType.of("STRING"), DataType.array_of(DataType.of("INT")))
STRUCT = DataType.struct_of([StructField("f1", DataType.of("INT")),
                             StructField("f2", DataType.map_of(DataType.of("INT"),
                                                               DataType.of("VARCHAR", 8)), "c")])


def _schema():
    return schema([TabletColumn("k", DataType.of("INT"), True), TabletColumn("m", MAP, False),
                   TabletColumn("s", STRUCT, False)])


def _table(n: int) -> pa.Table:
    m = [None if i % 7 == 3 else [] if i % 5 == 1 else [(f"k{i}", [i, None]), ("z", None)]
         for i in range(n)]
    s = [None if i % 11 == 0 else {"f1": None if i % 3 == 0 else i, "f2": [(i, f"v{i % 100}")]}
         for i in range(n)]
    return pa.table({"k": pa.array(range(n), pa.int32()), "m": pa.array(m, MAP.arrow()),
                     "s": pa.array(s, STRUCT.arrow())})


def test_nested_columns_round_trip_across_pages_and_row_reads(tmp_path):
    table = _table(20_000)
    reader = write_and_open(tmp_path, _schema(), table, page_size=4096)
    assert reader.columns["m"].num_pages > 1 and reader.columns["s"].num_pages > 1
    got, _ = read_all(reader)
    for name in ("m", "s"):
        assert got.column(name).combine_chunks().equals(table.column(name).combine_chunks())
    part, _ = read_all(reader, [ColumnPredicate("k", ">=", (19_990,))], ["k", "m", "s"])
    assert part.column("m").to_pylist() == table.column("m").to_pylist()[19_990:]
    assert part.column("s").to_pylist() == table.column("s").to_pylist()[19_990:]


def test_nested_pages_are_ipc_and_zone_maps_hold_no_values(tmp_path):
    page = encoding.encode(_table(5).column("s").combine_chunks(), STRUCT)
    assert page.encoding == encoding.IPC
    back = encoding.decode(page.encoding, page.has_nulls, pa.py_buffer(page.body()), 5, STRUCT)
    assert back.to_pylist() == _table(5).column("s").to_pylist()
    reader = write_and_open(tmp_path, _schema(), _table(30))
    from storage.segment.column_reader import SegmentIO
    from storage.stats import ScanStats
    with SegmentIO(reader.path, 1, ScanStats()) as io:
        zones = reader.columns["m"].zone_maps(io)
    assert zones.mins.null_count == len(zones) and zones.has_null.all()
    is_null, _ = read_all(reader, [ColumnPredicate("m", "is_null", ())], ["k"])
    assert is_null.column("k").to_pylist() == [i for i in range(30) if i % 7 == 3]


def test_nested_types_serialise_and_spell_as_doris():
    for t in (MAP, STRUCT, DataType.array_of(STRUCT)):
        assert DataType.from_dict(t.to_dict()) == t
    assert MAP.sql() == "MAP<text,array<int>>" and MAP.desc_sql() == "MAP<TEXT,ARRAY<INT>>"
    assert STRUCT.sql() == "struct<f1:int,f2:MAP<int,varchar(8)> comment 'c'>"
    assert STRUCT.desc_sql() == "STRUCT<f1:INT,f2:MAP<INT,VARCHAR(8)> COMMENT 'c'>"
    assert STRUCT.show_columns_sql() == "struct<f1:int,f2:map<int,varchar(8)>>"
    assert from_arrow(MAP.arrow()) == MAP and STRUCT.depth == 2
    assert not MAP.has_zone_values and MAP.key_bytes() == -1
