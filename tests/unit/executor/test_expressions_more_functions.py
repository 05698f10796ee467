"""Edge cases of the functions added with hashes.py, text_functions.py and json_modify.py that
the golden scripts do not reach: sliced and chunk-offset arrays, NULL rows under the data,
empty batches (type inference) and the JSON path rules one by one."""

from __future__ import annotations

import pyarrow as pa
import pytest

from executor.expressions.json_modify import modify, parse_modify_path
from executor.expressions.text_functions import _characters
from expr_helpers import TABLE, run


def test_characters_of_a_sliced_array_with_nulls():
    arr = pa.array(["zz", "ab", None, "", "中文x"])[1:]
    assert _characters(arr).to_pylist() == [["a", "b"], None, [], ["中", "文", "x"]]


def test_functions_type_on_zero_rows():
    empty = TABLE.slice(0, 0)
    assert run("murmur_hash3_64(s)", empty).type == pa.int64()
    assert run("xxhash_32(s)", empty).type == pa.int32()
    assert run("split_by_string(s, ',')", empty).type == pa.list_(pa.string())
    assert run("bit_count(t)", empty).type == pa.int8()
    assert run("bitand(t, i)", empty).type == pa.int32()
    assert run("sec_to_time(i)", empty).type == pa.string()
    assert run("uuid_numeric()", empty).type == pa.decimal128(38, 0)


def test_split_by_string_over_a_column():
    assert run("split_by_string(s, ',')", TABLE).to_pylist() == [
        ["abc"], None, ["中文"], ["x", "y", "z"]]


@pytest.mark.parametrize("doc, path, mode, expected", [
    ({"a": 1}, "$.b", "insert", {"a": 1, "b": 9}),
    ({"a": 1}, "$.a", "insert", {"a": 1}),
    ({"a": 1}, "$.b", "replace", {"a": 1}),
    ([1, 2], "$[5]", "set", [1, 2, 9]),
    (1, "$[0]", "replace", 9),
    (1, "$[1]", "set", [1, 9]),
    ({"a": {"b": [1]}}, "$.a.b[0]", "set", {"a": {"b": [9]}}),
    ({"a": 1}, "$.x.y", "set", {"a": 1}),
    ({"a": 1}, "$", "insert", {"a": 1}),
    ({"a": 1}, "$", "set", 9),
])
def test_modify_rules(doc, path, mode, expected):
    assert modify(doc, parse_modify_path(path), 9, mode) == expected


def test_modify_leaves_the_input_unchanged():
    doc = {"a": [1, 2]}
    modify(doc, parse_modify_path("$.a[0]"), 9, "set")
    assert doc == {"a": [1, 2]}
