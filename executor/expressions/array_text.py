"""ARRAY values as text: reading `[1, 2, 3]` / `["a", "b"]` (Stream Load CSV, CAST from a
string, a string inserted into an ARRAY column) and writing them as Doris does.

Written form (Doris 2.1's DataTypeArraySerDe for the MySQL protocol, the one CAST to a string
and the regression suites' .out files show): `[` elements joined by `, ` `]`; a NULL element
is `null`; CHAR/VARCHAR/STRING, DATE and DATETIME elements are in double quotes, numbers are
not (`[1, null, 3]`, `["a", "b"]`, `["2022-12-01 22:23:25.000"]`, `[24.990, 25.990]`); an
ARRAY element is written the same way inside (`[[1, 2], []]`).

Reading is vectorised for the usual shapes: the text between the brackets is split at commas by
Arrow, elements are trimmed and unquoted (single or double quotes), `null` / `NULL` is a NULL
element. A row the split cannot read (a comma or bracket inside a quoted string, escapes, a
nested array) is read by a small tokenizer for that row alone. A row that is not bracketed is
unreadable (NULL, and flagged for loads that filter it).
"""

from __future__ import annotations

import json
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from executor.expressions.list_layout import build, parts
from storage.types import DataType

ScalarText = Callable[[pa.Array, DataType], pa.Array]
_QUOTED_KINDS = ("CHAR", "VARCHAR", "STRING", "DATE", "DATETIME")


# -- writing -------------------------------------------------------------------------------------
def format_array(arr: pa.Array, dtype: DataType, scalar_text: ScalarText) -> pa.Array:
    """Doris's text of each ARRAY value of `arr` (NULL rows stay NULL); `scalar_text` writes
    the elements of a scalar type as the caller's context writes them."""
    offsets, values, valid = parts(arr)
    element = dtype.element or DataType("STRING")
    if element.is_array:
        text = format_array(values, element, scalar_text)
    else:
        text = scalar_text(values, element)
        if isinstance(text, pa.ChunkedArray):
            text = text.combine_chunks()
        if element.kind in _QUOTED_KINDS:
            text = pc.binary_join_element_wise('"', text, '"', "")
    text = pc.fill_null(text.cast(pa.string()), "null")
    joined = pc.binary_join(build(offsets, text), ", ")
    out = pc.binary_join_element_wise("[", joined, "]", "")
    return out if valid.all() else pc.if_else(pa.array(valid), out, pa.scalar(None, pa.string()))


# -- reading -------------------------------------------------------------------------------------
def parse_array_text(arr: pa.Array, element: DataType) -> tuple[pa.Array, np.ndarray]:
    """(ARRAY values of the text `arr` with their elements still as text, or for a nested
    ARRAY element type already parsed; rows that are not array text, as a numpy mask). NULL
    text is a NULL row, not a bad one."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    n = len(arr)
    text = pc.utf8_trim_whitespace(arr.cast(pa.string()))
    present = _mask(pc.is_valid(text))
    bracketed = _mask(pc.and_(pc.starts_with(text, "["), pc.ends_with(text, "]")))
    bad = present & ~bracketed
    inner = pc.utf8_trim_whitespace(pc.utf8_slice_codeunits(text, 1, -1))
    tricky = _mask(pc.match_substring_regex(inner, r"[\[\]\\]")) & bracketed
    if element.is_array:
        tricky = bracketed.copy()
    ok = bracketed & ~tricky
    inner = pc.if_else(pa.array(ok), inner, "")
    pieces = pc.split_pattern(inner, ",")
    offsets, flat, _ = parts(pieces)
    flat = pc.utf8_trim_whitespace(flat)
    # "" between the brackets is an empty array, not one empty element
    empty = _mask(pc.equal(inner, ""))
    lengths = np.diff(offsets)
    lengths[empty] = 0
    keep = np.repeat(~empty, np.diff(offsets))
    flat = flat.filter(pa.array(keep))
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    # a piece that opens a quote it does not close: a comma was inside a string
    opened = _mask(pc.or_(pc.starts_with(flat, '"'), pc.starts_with(flat, "'")))
    closed = _mask(pc.and_(pc.greater_equal(pc.utf8_length(flat), 2),
                           pc.or_(pc.ends_with(flat, '"'), pc.ends_with(flat, "'"))))
    broken = opened & ~closed
    if broken.any():
        rows = np.repeat(np.arange(n), np.diff(offsets))[broken]
        tricky[np.unique(rows)] = True
    values = _unquote(flat, opened & closed)
    result = build(offsets, values, ok)
    if tricky.any():
        result, unreadable = _slow_rows(result, text, tricky, element)
        bad |= unreadable
    return result, bad


def _unquote(flat: pa.Array, quoted: np.ndarray) -> pa.Array:
    stripped = pc.utf8_slice_codeunits(flat, 1, -1)
    is_null = pc.and_(pa.array(~quoted), pc.equal(pc.utf8_lower(flat), "null"))
    out = pc.if_else(pa.array(quoted), stripped, flat)
    return pc.if_else(is_null, pa.scalar(None, pa.string()), out)


def _slow_rows(result: pa.Array, text: pa.Array, tricky: np.ndarray,
               element: DataType) -> tuple[pa.Array, np.ndarray]:
    """Re-read the `tricky` rows one by one (only those rows) with the tokenizer."""
    rows = np.flatnonzero(tricky)
    bad = np.zeros(len(text), dtype=bool)
    read: list = []
    for i, raw in zip(rows.tolist(), text.take(pa.array(rows)).to_pylist()):
        try:
            read.append(_as_text(_Reader(raw).value_list(), element))
        except ValueError:
            read.append(None)
            bad[i] = True
    slow = pa.array(read, _text_type(DataType.array_of(element)))
    if element.is_array:  # every bracketed row went the slow way
        result = pa.nulls(len(text), slow.type)
    index = np.arange(len(text), dtype=np.int64)
    index[rows] = len(text) + np.arange(len(rows))
    return pa.concat_arrays([result, slow]).take(pa.array(index)), bad


def _text_type(dtype: DataType) -> pa.DataType:
    """The Arrow type of parsed text of `dtype`: lists of strings, as deep as the ARRAY."""
    return pa.list_(_text_type(dtype.element)) if dtype.is_array else pa.string()


def _as_text(items: list, element: DataType) -> list:
    """Tokenized items as the text (or nested lists of text) the caller converts."""
    if element.is_array:
        return [None if v is None else _as_text(_need_list(v), element.element) for v in items]
    return [None if v is None else (v if isinstance(v, str) else _need_scalar(v))
            for v in items]


def _need_list(v) -> list:
    if not isinstance(v, list):
        raise ValueError("expected a nested array")
    return v


def _need_scalar(v) -> str:
    if isinstance(v, list):
        raise ValueError("unexpected nested array")
    return str(v)


class _Reader:
    """A tokenizer for one array text: brackets, commas, quoted strings (with backslash
    escapes), bare words; bare `null` is None."""

    def __init__(self, text: str):
        self.s, self.i = text, 0

    def value_list(self) -> list:
        out = self._list()
        self._space()
        if self.i != len(self.s):
            raise ValueError("text after the array")
        return out

    def _space(self) -> None:
        while self.i < len(self.s) and self.s[self.i].isspace():
            self.i += 1

    def _list(self) -> list:
        self._space()
        if self.i >= len(self.s) or self.s[self.i] != "[":
            raise ValueError("expected [")
        self.i += 1
        items: list = []
        self._space()
        if self.i < len(self.s) and self.s[self.i] == "]":
            self.i += 1
            return items
        while True:
            items.append(self._item())
            self._space()
            if self.i >= len(self.s):
                raise ValueError("unterminated array")
            c = self.s[self.i]
            self.i += 1
            if c == "]":
                return items
            if c != ",":
                raise ValueError("expected , or ]")

    def _item(self):
        self._space()
        if self.i >= len(self.s):
            raise ValueError("missing element")
        c = self.s[self.i]
        if c == "[":
            return self._list()
        if c in "\"'":
            return self._quoted(c)
        start = self.i
        while self.i < len(self.s) and self.s[self.i] not in ",]":
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


def _mask(a: pa.Array) -> np.ndarray:
    return np.asarray(pc.fill_null(a, False).to_numpy(zero_copy_only=False), dtype=bool)


def lost_elements(source: pa.Array, converted: pa.Array) -> np.ndarray:
    """Rows whose ARRAY lost a value in a non-strict conversion: array text that did not
    read, or an element that was there (not NULL) before and is NULL after (strict mode
    filters those rows)."""
    present = _valid(source).astype(bool)
    if pa.types.is_string(source.type) or pa.types.is_large_string(source.type):
        source, _ = parse_array_text(source, DataType("STRING"))
    before_offsets, before, _ = parts(source)
    after_offsets, after, after_valid = parts(converted)
    rows_before = np.repeat(np.arange(len(source)), np.diff(before_offsets))
    rows_after = np.repeat(np.arange(len(converted)), np.diff(after_offsets))
    n = len(source)
    had = np.bincount(rows_before, weights=_valid(before), minlength=n)
    kept = np.bincount(rows_after, weights=_valid(after), minlength=n)
    return (present & ~after_valid) | (had != kept)


def _valid(values: pa.Array) -> np.ndarray:
    if pa.types.is_null(values.type):
        return np.zeros(len(values))
    return np.asarray(pc.is_valid(values).to_numpy(zero_copy_only=False), dtype=np.float64)
