"""Doris's multi-pattern string searches, n-gram similarity and digital_masking.

    multi_match_any(s, [p1, ...])             TINYINT: 1 when s matches any RE2 pattern
                                              (unanchored, case-sensitive), else 0
    multi_search_all_positions(s, [n1, ...])  ARRAY<INT>: the 1-based byte position of each
                                              needle's first occurrence in s, 0 if absent
                                              (multi_search_all_positions('Hello, World!',
                                              ['hello', '!', 'world']) = [0, 13, 0])
    ngram_search(s, pattern, n)               DOUBLE: 2 * |A & B| / (|A| + |B|) over the sets
                                              of n-byte grams of s and pattern; 0 when either
                                              is shorter than n (Doris documents ASCII only)
    digital_masking(x)                        concat(left(x, 3), '****', right(x, 4))

NULL arguments give NULL. The pattern / needle lists are flattened and each distinct pattern
runs once as an Arrow kernel (match_substring_regex: RE2, as Doris; find_substring) over the
rows holding it; ngram_search packs every gram of the batch's bytes into one uint64 code
(a numpy sliding window, base-256 digits up to 8 bytes, a wrapping polynomial past that) and
counts distinct (row, code) pairs with np.unique.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from executor.expressions.casts import cast_value
from executor.expressions.context import Frame, Value
from executor.expressions.errors import ExpressionError
from executor.expressions.json_functions import call_args
from executor.expressions.list_layout import is_list, parts
from executor.expressions.vectors import on_arrays, to_array, valid_mask

STRING = pa.string()


def _args(node: exp.Expression, name: str, count: int) -> list[exp.Expression]:
    args = call_args(node)
    if len(args) != count:
        raise ExpressionError(f"Can not found function '{name}' which has {len(args)} arity. "
                              f"Candidate functions are: [{name}]")
    return args


def _per_pattern(texts: pa.Array, lists: pa.Array, kernel) -> tuple[np.ndarray, pa.Array,
                                                                     np.ndarray, np.ndarray]:
    """Run `kernel(texts_of_rows, pattern)` once per distinct pattern over the rows that hold
    it. (offsets, flat results in element order, rows valid, elements valid)."""
    offsets, patterns, valid = parts(lists)
    rows = np.repeat(np.arange(len(lists), dtype=np.int64), np.diff(offsets))
    present = valid_mask(patterns) & valid_mask(texts)[rows] if len(rows) else \
        np.zeros(0, dtype=bool)
    encoded = pc.dictionary_encode(patterns.cast(STRING)) if len(patterns) else None
    results: list[pa.Array] = []
    positions: list[np.ndarray] = []
    if encoded is not None:
        codes = np.asarray(encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False))
        for k, pattern in enumerate(encoded.dictionary.to_pylist()):
            at = np.flatnonzero((codes == k) & present)
            if len(at):
                results.append(kernel(texts.take(pa.array(rows[at])), pattern))
                positions.append(at)
    flat = np.zeros(len(patterns), dtype=np.int64)
    if results:
        flat[np.concatenate(positions)] = np.concatenate(
            [np.asarray(r.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False))
             for r in results])
    return offsets, flat, valid, present


def _lists(value: Value, n: int, name: str) -> pa.Array:
    arr = to_array(value, n)
    if pa.types.is_null(arr.type):
        return pa.nulls(n, pa.list_(STRING))
    if not is_list(arr.type):
        raise ExpressionError(f"Can not find the compatibility function signature: {name}"
                              f"(VARCHAR, {str(arr.type).upper()})")
    return arr


def _regex(texts: pa.Array, pattern: str) -> pa.Array:
    try:
        return pc.match_substring_regex(texts, pattern)
    except pa.ArrowInvalid as e:
        raise ExpressionError(f"multi_match_any: invalid pattern '{pattern}': {e}") from None


def _searching(name: str, search, finish):
    """A handler of `name(s, [p1, ...])`: `search(texts, pattern)` runs per distinct pattern
    (`_per_pattern`), `finish(offsets, flat, nulls)` builds the result."""
    def handler(node: exp.Expression, frame: Frame) -> Value:
        text_node, patterns_node = _args(node, name, 2)

        def kernel(text: pa.Array, patterns: pa.Array) -> pa.Array:
            text = cast_value(text, STRING)
            patterns = _lists(patterns, len(text), name)
            offsets, flat, valid, _ = _per_pattern(text, patterns, search)
            return finish(offsets, flat, ~(valid & valid_mask(text)))
        return on_arrays(kernel, frame.eval(text_node), frame.eval(patterns_node), n=frame.n)
    return handler


def _any_hit(offsets: np.ndarray, flat: np.ndarray, nulls: np.ndarray) -> pa.Array:
    hits = np.add.reduceat(flat, offsets[:-1]) if len(flat) else np.zeros(len(nulls))
    hits = np.where(np.diff(offsets) > 0, hits, 0)
    return pa.array((hits > 0).astype(np.int8), pa.int8(), mask=nulls)


def _position(texts: pa.Array, needle: str) -> pa.Array:
    return pc.add(pc.find_substring(texts, needle), 1)  # -1 (absent) -> 0


def _position_lists(offsets: np.ndarray, flat: np.ndarray, nulls: np.ndarray) -> pa.Array:
    return pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)),
                                    pa.array(flat.astype(np.int32), pa.int32()),
                                    mask=pa.array(nulls) if nulls.any() else None)


def _gram_codes(texts: pa.Array, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row of each gram, its code, gram count per row) of every n-byte gram of `texts`."""
    texts = texts.cast(STRING)
    raw = pc.cast(texts.fill_null(""), pa.binary())
    offsets = np.frombuffer(raw.buffers()[1], dtype=np.int32)[raw.offset:raw.offset + len(raw)
                                                              + 1].astype(np.int64)
    data = np.frombuffer(raw.buffers()[2], dtype=np.uint8) if raw.buffers()[2] is not None \
        else np.zeros(0, np.uint8)
    counts = np.maximum(np.diff(offsets) - n + 1, 0)
    rows = np.repeat(np.arange(len(texts), dtype=np.int64), counts)
    starts = np.repeat(offsets[:-1], counts) + (np.arange(len(rows)) -
                                                np.repeat(np.cumsum(counts) - counts, counts))
    base = np.uint64(256 if n <= 8 else 1_000_003)
    codes = np.zeros(len(rows), dtype=np.uint64)
    for j in range(n):  # n is a small constant: one vector step per byte of the gram
        codes = codes * base + data[starts + j].astype(np.uint64)
    return rows, codes, counts


def eval_ngram_search(node: exp.Expression, frame: Frame) -> Value:
    text_node, pattern_node, n_node = _args(node, "ngram_search", 3)
    pattern, gram = frame.eval(pattern_node), frame.eval(n_node)
    if not isinstance(pattern, pa.Scalar) or not isinstance(gram, pa.Scalar):
        raise ExpressionError("ngram_search: the pattern and gram_num must be constants")
    texts = frame.eval(text_node)
    n = cast_value(gram, pa.int64()).as_py()
    needle = cast_value(pattern, STRING).as_py()
    if n is None or needle is None:
        return pa.scalar(None, pa.float64())
    if n <= 0:
        raise ExpressionError("ngram_search: gram_num must be positive")

    def kernel(text: pa.Array) -> pa.Array:
        text = cast_value(text, STRING)
        valid = valid_mask(text)
        _, wanted, pcount = _gram_codes(pa.array([needle]), n)
        wanted = np.unique(wanted)
        rows, codes, counts = _gram_codes(text, n)
        pairs = np.unique(np.stack([rows.astype(np.uint64), codes], axis=1), axis=0) \
            if len(rows) else np.zeros((0, 2), np.uint64)
        prow = pairs[:, 0].astype(np.int64)
        distinct = np.bincount(prow, minlength=len(text))
        common = np.bincount(prow[np.isin(pairs[:, 1], wanted)], minlength=len(text))
        total = distinct + len(wanted)
        short = (counts == 0) | (pcount[0] == 0)
        score = np.where(short, 0.0, 2.0 * common / np.maximum(total, 1))
        return pa.array(score, pa.float64(), mask=~valid)
    return on_arrays(kernel, texts, n=frame.n)


def eval_digital_masking(node: exp.Expression, frame: Frame) -> Value:
    (arg,) = _args(node, "digital_masking", 1)
    text = exp.Cast(this=arg.copy(), to=exp.DataType.build("VARCHAR"))
    return frame.eval(exp.Concat(expressions=[
        exp.Left(this=text, expression=exp.Literal.number(3)), exp.Literal.string("****"),
        exp.Right(this=text.copy(), expression=exp.Literal.number(4))]))


HANDLERS: dict = {}
FUNCTIONS = {"MULTI_MATCH_ANY": _searching("multi_match_any", _regex, _any_hit),
             "MULTI_SEARCH_ALL_POSITIONS": _searching("multi_search_all_positions", _position,
                                                      _position_lists),
             "NGRAM_SEARCH": eval_ngram_search, "DIGITAL_MASKING": eval_digital_masking}
