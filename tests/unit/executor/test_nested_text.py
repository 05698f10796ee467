"""MAP / STRUCT text: nested_text.py writes Doris's MySQL text, nested_parse.py reads it (and
JSON, bare words, a STRUCT by name or position) back into the same shape."""

import pyarrow as pa

from executor.expressions.casts import scalar_text
from executor.expressions.nested_parse import parse_nested_text
from executor.expressions.nested_text import format_nested
from storage.types import DataType, StructField

M = DataType.map_of(DataType.of("STRING"), DataType.of("INT"))
S = DataType.struct_of([StructField("a", DataType.of("INT")),
                        StructField("b", DataType.array_of(DataType.of("DATE")))])


def test_writes_maps_and_structs_as_doris():
    maps = pa.array([[("a", 1), ("b", None)], [], None], M.arrow())
    assert format_nested(maps, M, scalar_text).to_pylist() == ['{"a":1, "b":null}', "{}", None]
    structs = pa.array([{"a": 1, "b": [None]}, None, {"a": None, "b": None}], S.arrow())
    assert format_nested(structs, S, scalar_text).to_pylist() == [
        '{"a":1, "b":[null]}', None, '{"a":null, "b":null}']
    assert format_nested(structs, S, scalar_text, field_names=False)[0].as_py() == "{1, [null]}"


def test_reads_text_by_name_position_and_flags_bad_rows():
    text = pa.array(['{"a": 1, "b": "x,y"}', "{a:2}", None, "{'a' 3}", "[1]", "{}"])
    values, bad = parse_nested_text(text, M)
    assert values.to_pylist()[:3] == [[("a", "1"), ("b", "x,y")], [("a", "2")], None]
    assert bad.tolist() == [False, False, False, True, True, False]
    structs, bad = parse_nested_text(pa.array(['{"B": ["2024-01-02"], "a": 7}', "{8}",
                                               "{1, [], 3}"]), S)
    assert structs.to_pylist()[:2] == [{"a": "7", "b": ["2024-01-02"]}, {"a": "8", "b": None}]
    assert bad.tolist() == [False, False, True]
