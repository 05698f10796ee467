"""ARRAY values read from text: `[1, 2, 3]` / `["a", "b"]` (Stream Load CSV, CAST from a
string, a string inserted into an ARRAY column). Writing them is nested_text.py's.

Reading is vectorised for the usual shapes: the text between the brackets is split at commas by
Arrow, elements are trimmed and unquoted (single or double quotes), `null` / `NULL` is a NULL
element. A row the split cannot read (a comma or bracket inside a quoted string, escapes, a
nested value) is read by nested_parse.py's tokenizer for that row alone. A row that is not bracketed is
unreadable (NULL, and flagged for loads that filter it).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from executor.expressions.list_layout import build, parts
from executor.expressions.nested_parse import NestedReader, shape, text_type
from storage.types import DataType

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
    if element.is_nested:
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
    array_type = DataType.array_of(element)
    bad = np.zeros(len(text), dtype=bool)
    read: list = []
    for i, raw in zip(rows.tolist(), text.take(pa.array(rows)).to_pylist()):
        try:
            read.append(shape(NestedReader(raw).value_list(), array_type))
        except ValueError:
            read.append(None)
            bad[i] = True
    slow = pa.array(read, text_type(array_type))
    if element.is_nested:  # every bracketed row went the slow way
        result = pa.nulls(len(text), slow.type)
    index = np.arange(len(text), dtype=np.int64)
    index[rows] = len(text) + np.arange(len(rows))
    return pa.concat_arrays([result, slow]).take(pa.array(index)), bad


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
