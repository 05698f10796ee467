"""JSON columns in segment files: string pages (BINARY or DICT) of normalized JSON text read
back as Arrow's JSON extension type, one page or many, NULLs, row reads across pages, and zone
maps that keep only has_null / has_not_null (no min/max on JSON)."""

import numpy as np
import pyarrow as pa
from storage_testutil import read_all, schema, write_and_open

from storage import DataType, TabletColumn
from storage.predicate import ColumnPredicate
from storage.segment import encoding
from storage.types import JSON_ARROW, as_json, from_arrow

JSON = DataType.of("JSONB")


def _schema():
    return schema([TabletColumn("k", DataType.of("INT"), True), TabletColumn("j", JSON, False)])


def _table(n: int) -> pa.Table:
    j = [None if i % 7 == 3 else f'{{"i":{i},"a":[{i % 5},"x"]}}' if i % 2 else str(i % 3)
         for i in range(n)]
    return pa.table({"k": pa.array(np.arange(n), pa.int32()), "j": as_json(pa.array(j))})


def test_json_columns_round_trip_in_one_page_and_across_pages(tmp_path):
    for n, page_size in ((50, 64 * 1024), (20_000, 4096)):
        table = _table(n)
        (tmp_path / str(n)).mkdir()
        reader = write_and_open(tmp_path / str(n), _schema(), table, page_size=page_size)
        got, _ = read_all(reader)
        assert got.column("j").type == JSON_ARROW
        assert got.column("j").to_pylist() == table.column("j").to_pylist()
    assert reader.columns["j"].num_pages > 1
    part, _ = read_all(reader, [ColumnPredicate("k", ">=", (19_990,))], ["k", "j"])
    assert part.column("j").to_pylist() == table.column("j").to_pylist()[19_990:]


def test_json_pages_are_string_pages_and_zone_maps_hold_no_values(tmp_path):
    values = as_json(pa.array(['{"a":1}', None, '{"a":1}', "[]"]))
    page = encoding.encode(values, JSON)
    assert page.encoding in (encoding.BINARY, encoding.DICT)
    back = encoding.decode(page.encoding, page.has_nulls, pa.py_buffer(page.body()), 4, JSON)
    assert back.type == JSON_ARROW and back.to_pylist() == values.to_pylist()
    reader = write_and_open(tmp_path, _schema(), _table(30))
    from storage.segment.column_reader import SegmentIO
    from storage.stats import ScanStats
    with SegmentIO(reader.path, 1, ScanStats()) as io:
        zones = reader.columns["j"].zone_maps(io)
    assert zones.mins.null_count == len(zones) and zones.maxs.null_count == len(zones)
    assert zones.has_null.all() and zones.has_not_null.all()
    is_null, _ = read_all(reader, [ColumnPredicate("j", "is_null", ())], ["k"])
    assert is_null.column("k").to_pylist() == [i for i in range(30) if i % 7 == 3]


def test_json_type_names_and_serialisation():
    assert DataType.of("JSON") == JSON and DataType.from_dict(JSON.to_dict()) == JSON
    assert (JSON.sql(), JSON.desc_sql(), JSON.show_columns_sql()) == ("json", "JSON", "json")
    assert JSON.arrow() == JSON_ARROW and from_arrow(JSON_ARROW) == JSON
    assert not JSON.has_zone_values and JSON.key_bytes() == -1
