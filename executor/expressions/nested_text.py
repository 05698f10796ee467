"""ARRAY, MAP and STRUCT values written as text, as Doris 2.1 writes them.

The form (Doris 2.1's DataTypeArraySerDe / DataTypeMapSerDe / DataTypeStructSerDe for the MySQL
protocol, the one CAST to a string and the regression suites' .out files show):

    ARRAY   `[` elements joined by `, ` `]`                 [1, null, 3]   ["a", "b"]
    MAP     `{` key `:` value pairs joined by `, ` `}`      {"a":1, "b":null}   {1:2}
    STRUCT  `{` `"name":` value fields joined by `, ` `}`   {"f1":1, "f2":"x"}

A NULL element, key, value or field is `null`; CHAR/VARCHAR/STRING, DATE and DATETIME values
are in double quotes, numbers are not; a nested value is written the same way inside
(`[[1, 2], []]`, `{"a":[1, 2]}`, `[{"f1":1}]`). Every level is one pass of Arrow string
kernels over the flat children: no Python per row.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from executor.expressions.list_layout import build, nonnull, parts
from storage.types import DataType

ScalarText = Callable[[pa.Array, DataType], pa.Array]
_QUOTED_KINDS = ("CHAR", "VARCHAR", "STRING", "DATE", "DATETIME")
_NULL_TEXT = pa.scalar(None, pa.string())


def format_nested(arr: pa.Array, dtype: DataType, scalar_text: ScalarText,
                  field_names: bool = True) -> pa.Array:
    """Doris's text of each ARRAY / MAP / STRUCT value of `arr` (NULL rows stay NULL);
    `scalar_text` writes values of a scalar type as the caller's context writes them. Without
    `field_names` a STRUCT is its values in order (`{1, "x"}`: read back by position)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if dtype.is_struct or pa.types.is_struct(arr.type):
        return _format_struct(arr, dtype, scalar_text, field_names)
    offsets, values, valid = parts(arr)
    if dtype.is_map or pa.types.is_map(arr.type):
        keys = _element_text(values.field(0), _child(dtype, 0), scalar_text, field_names)
        items = _element_text(values.field(1), _child(dtype, 1), scalar_text, field_names)
        entries = pc.binary_join_element_wise(keys, items, ":")
        return _wrap(build(offsets, entries), valid, "{", "}")
    element = dtype.element or DataType("STRING")
    text = _element_text(values, element, scalar_text, field_names)
    return _wrap(build(offsets, text), valid, "[", "]")


def _child(dtype: DataType, i: int) -> DataType:
    return dtype.fields[i].type if len(dtype.fields) > i else DataType("STRING")


def _format_struct(arr: pa.Array, dtype: DataType, scalar_text: ScalarText,
                   field_names: bool) -> pa.Array:
    names = [f.name for f in dtype.fields] if dtype.fields else [f.name for f in arr.type]
    texts = []
    for i, name in enumerate(names):
        value = _element_text(arr.field(i), _child(dtype, i), scalar_text, field_names)
        texts.append(pc.binary_join_element_wise(f'"{name}":', value, "")
                     if field_names else value)
    valid = nonnull(arr)
    if not texts:
        joined = pa.array(np.full(len(arr), "", dtype=object), pa.string())
    else:
        joined = pc.binary_join_element_wise(*texts, ", ")
    out = pc.binary_join_element_wise("{", joined, "}", "")
    return out if valid.all() else pc.if_else(pa.array(valid), out, _NULL_TEXT)


def _element_text(values: pa.Array, element: DataType, scalar_text: ScalarText,
                  field_names: bool) -> pa.Array:
    """The text of each value inside a complex value, NULL written `null`."""
    if element.is_nested or pa.types.is_nested(values.type):
        text = format_nested(values, element, scalar_text, field_names)
    else:
        text = scalar_text(values, element)
        if isinstance(text, pa.ChunkedArray):
            text = text.combine_chunks()
        if element.kind in _QUOTED_KINDS:
            text = pc.binary_join_element_wise('"', text, '"', "")
    return pc.fill_null(text.cast(pa.string()), "null")


def _wrap(lists: pa.Array, valid: np.ndarray, left: str, right: str) -> pa.Array:
    out = pc.binary_join_element_wise(left, pc.binary_join(lists, ", "), right, "")
    return out if valid.all() else pc.if_else(pa.array(valid), out, _NULL_TEXT)
