"""ARRAY, MAP and STRUCT values read from text, as Doris 2.1 reads them (Stream Load CSV, CAST
from a string, a string inserted into a complex column, JSON-format loads' nested values).

The text is what nested_text.py writes, and JSON: `[1, 2]`, `{"a":1, "b":null}`, `{1:2}`,
`{"f1":1, "f2":"x"}`, `{1, "x"}` (a STRUCT's values in field order), nested at will. Strings
may be in single or double quotes (with backslash escapes) or bare (`{a:1}`); bare `null` is
NULL. A STRUCT written with names takes its fields by name, case-insensitively, in any order;
a field the text lacks is NULL (Doris's DataTypeStructSerDe).

`parse_nested_text` reads each distinct text once with the small tokenizer `NestedReader` and
returns the values with their scalars still as text (`text_type`): the caller casts those
strictly (INSERT) or not (CAST, Stream Load) with the scalar rules it already has. Array text
of scalars has a vectorised reader of its own (array_text.py) that falls back to this one.
"""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from storage.types import DataType


class Braced:
    """A `{...}` value as read: `pairs` (key, value) when written with colons, else `items`."""

    def __init__(self, pairs: list | None = None, items: list | None = None):
        self.pairs, self.items = pairs, items


class NestedReader:
    """A tokenizer for one nested value's text: brackets, braces, commas, colons, quoted
    strings (with backslash escapes), bare words; bare `null` is None."""

    def __init__(self, text: str):
        self.s, self.i = text, 0

    def value(self):
        """The whole text as one value (a list or a Braced); ValueError if it is not one."""
        self._space()
        if self.i >= len(self.s) or self.s[self.i] not in "[{":
            raise ValueError("expected [ or {")
        out = self._item(",")
        self._space()
        if self.i != len(self.s):
            raise ValueError("text after the value")
        return out

    def value_list(self) -> list:
        out = self.value()
        if not isinstance(out, list):
            raise ValueError("expected [")
        return out

    def _space(self) -> None:
        while self.i < len(self.s) and self.s[self.i].isspace():
            self.i += 1

    def _sequence(self, close: str, braced: bool) -> list:
        """Items up to `close`; in braces each item may be `key: value` (a pair tuple)."""
        self.i += 1
        items: list = []
        self._space()
        if self.i < len(self.s) and self.s[self.i] == close:
            self.i += 1
            return items
        while True:
            item = self._item(",:" + close if braced else "," + close)
            self._space()
            if braced and self.i < len(self.s) and self.s[self.i] == ":":
                self.i += 1
                item = (item, self._item("," + close))
                self._space()
            items.append(item)
            if self.i >= len(self.s):
                raise ValueError("unterminated value")
            c = self.s[self.i]
            self.i += 1
            if c == close:
                return items
            if c != ",":
                raise ValueError(f"expected , or {close}")

    def _item(self, stops: str):
        self._space()
        if self.i >= len(self.s):
            raise ValueError("missing element")
        c = self.s[self.i]
        if c == "[":
            return self._sequence("]", False)
        if c == "{":
            items = self._sequence("}", True)
            pairs = [x for x in items if isinstance(x, tuple)]
            if pairs and len(pairs) != len(items):
                raise ValueError("some entries have keys, some do not")
            return Braced(pairs=pairs) if pairs or not items else Braced(items=items)
        if c in "\"'":
            return self._quoted(c)
        start = self.i
        while self.i < len(self.s) and self.s[self.i] not in stops:
            self.i += 1
        word = self.s[start:self.i].strip()
        return None if word.lower() == "null" else word

    def _quoted(self, quote: str) -> str:
        self.i += 1
        out = []
        while self.i < len(self.s):
            c = self.s[self.i]
            if c == "\\" and self.i + 1 < len(self.s):
                out.append(json.loads(f'"\\{self.s[self.i + 1]}"')
                           if self.s[self.i + 1] in 'nrtbf"\\/' else self.s[self.i + 1])
                self.i += 2
                continue
            self.i += 1
            if c == quote:
                return "".join(out)
            out.append(c)
        raise ValueError("unterminated string")


def text_type(dtype: DataType) -> pa.DataType:
    """The Arrow type of `dtype`'s values read from text: its shape, every scalar a string."""
    if dtype.is_array:
        return pa.list_(text_type(dtype.element))
    if dtype.is_map:
        return pa.map_(pa.string(), text_type(dtype.map_value))
    if dtype.is_struct:
        return pa.struct([pa.field(f.name, text_type(f.type)) for f in dtype.fields])
    return pa.string()


def shape(value, dtype: DataType):
    """A read value as the Python value of `text_type(dtype)`; ValueError if the shapes differ
    (a scalar where a list is due, a map key that is NULL or nested, too many struct values)."""
    if value is None:
        return None
    if dtype.is_array:
        if not isinstance(value, list):
            raise ValueError("expected an array")
        return [shape(v, dtype.element) for v in value]
    if dtype.is_map:
        if not isinstance(value, Braced) or value.items:
            raise ValueError("expected a map")
        if any(k is None or not isinstance(k, str) for k, _ in value.pairs):
            raise ValueError("a map key must be a non-NULL scalar")
        return [(k, shape(v, dtype.map_value)) for k, v in value.pairs]
    if dtype.is_struct:
        return _struct_shape(value, dtype)
    if isinstance(value, (list, Braced)):
        raise ValueError("expected a scalar")
    return value


def _struct_shape(value, dtype: DataType) -> dict:
    if not isinstance(value, Braced):
        raise ValueError("expected a struct")
    out = {f.name: None for f in dtype.fields}
    if value.items is not None:
        if len(value.items) > len(dtype.fields):
            raise ValueError("more values than the struct's fields")
        for f, v in zip(dtype.fields, value.items):
            out[f.name] = shape(v, f.type)
        return out
    for k, v in value.pairs:
        f = dtype.field(k) if isinstance(k, str) else None
        if f is not None:
            out[f.name] = shape(v, f.type)
    return out


def parse_nested_text(arr: pa.Array | pa.ChunkedArray,
                      dtype: DataType) -> tuple[pa.Array, np.ndarray]:
    """(values of `text_type(dtype)` read from the text `arr`; rows that do not read, as a
    numpy mask). NULL text is a NULL row, not a bad one. Each distinct text is read once."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    encoded = pc.dictionary_encode(arr.cast(pa.string()))
    read, unreadable = [], []
    for text in encoded.dictionary.to_pylist():
        try:
            read.append(shape(NestedReader(text).value(), dtype))
            unreadable.append(False)
        except ValueError:
            read.append(None)
            unreadable.append(True)
    values = pa.array(read, text_type(dtype)).take(encoded.indices)
    index = np.asarray(pc.fill_null(encoded.indices, 0).to_numpy(zero_copy_only=False))
    bad = np.asarray(unreadable + [False], dtype=bool)[
        np.where(np.asarray(encoded.indices.is_valid()), index, len(unreadable))]
    return values, bad
