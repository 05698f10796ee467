"""NGRAM_BF index: per data page, a bloom filter of the n-grams of a string column's values.

Owns building the filters at write time, reading them back, and the page test for
`col LIKE 'pattern'` (Doris's NgramBloomFilterIndex / NGramTokenExtractor): a page may hold a
match only if its filter may contain every n-gram of every literal run of the pattern that has
at least `gram_size` characters (runs are cut at `%` and `_`; `\\` escapes the next
character). A pattern with no such run tests nothing (every page is kept).

Per page: the distinct grams' murmur hashes (murmur.py, as the bloom filter index hashes a
string) set 8 bits each in a block-split filter of `bf_size` bytes, rounded up to a power of
two and at least one 32-byte block (bloom_filter.py's layout and bit positions). The filters
are one page in bloom_filter.py's BLOOM_FILTER page format; the column meta's `ngram_bf`
holds `{"gram_size": n, "bf_size": bytes, "page": pointer}`.

Grams are characters (code points), as Doris's extractor reads UTF-8. They are cut with one
`utf8_slice_codeunits` per start position over the values long enough, so the work is a loop
over character positions, never over rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from storage.segment import bloom_filter, murmur
from storage.types import DataType

_STRING = DataType("STRING")


@dataclass(frozen=True)
class NgramFilter:
    """`column LIKE pattern` on a column with an NGRAM_BF index (planner/ngram_like.py)."""

    column: str
    pattern: str


def filter_bytes(bf_size: int) -> int:
    """The filter size used for a `bf_size` property: a power of two, at least one block."""
    size = max(int(bf_size), bloom_filter.BYTES_PER_BLOCK)
    return 1 << (size - 1).bit_length()


def _grams(values: pa.Array, n: int) -> tuple[np.ndarray, pa.Array]:
    """(row of each gram, the gram) for every n-character substring of every value."""
    lengths = pc.fill_null(pc.utf8_length(values), 0).to_numpy(zero_copy_only=False)
    longest = int(lengths.max()) if len(lengths) else 0
    rows, grams = [], []
    for start in range(max(longest - n + 1, 0)):
        which = np.flatnonzero(lengths >= start + n)
        part = pc.utf8_slice_codeunits(values.take(pa.array(which)), start, start + n)
        rows.append(which)
        grams.append(part)
    if not rows:
        return np.zeros(0, np.int64), pa.array([], pa.string())
    return np.concatenate(rows), pa.concat_arrays(grams)


def compute(values: pa.Array, starts: np.ndarray, ends: np.ndarray, gram_size: int,
            bf_size: int) -> bytes:
    """The BLOOM_FILTER page body of the pages [starts[i], ends[i]) of a string column."""
    if not pa.types.is_string(values.type):
        values = values.cast(pa.string())
    rows, grams = _grams(values, gram_size)
    size = filter_bytes(bf_size)
    pages = len(starts)
    bits = np.zeros(pages * size * 8, dtype=bool)
    if len(rows):
        page_of = np.searchsorted(ends, rows, side="right")
        hashes = murmur.hash_array(grams, _STRING)
        pairs = np.unique(np.stack([page_of.astype(np.uint64), hashes], axis=1), axis=0)
        pos = bloom_filter._positions(pairs[:, 1].copy(), size // bloom_filter.BYTES_PER_BLOCK)
        bits[(pairs[:, 0].astype(np.int64)[:, None] * size * 8 + pos).ravel()] = True
    packed = np.packbits(bits, bitorder="little").tobytes()
    filters = [packed[i * size:(i + 1) * size] for i in range(pages)]
    has_null = np.zeros(pages, dtype=bool)  # NULL rows hold no gram; LIKE never matches them
    return bloom_filter.encode(filters, has_null)


def pattern_grams(pattern: str, n: int) -> list[str]:
    """The distinct n-grams of the literal runs of a LIKE pattern (runs cut at `%` / `_`)."""
    runs, cur, i = [], [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            cur.append(pattern[i + 1])
            i += 2
            continue
        if ch in "%_":
            runs.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    runs.append("".join(cur))
    grams = {run[j:j + n] for run in runs for j in range(len(run) - n + 1)}
    return sorted(grams)


def pages_kept(filters: bloom_filter.BloomFilters, pattern: str, gram_size: int) -> np.ndarray:
    """bool per page: may the page hold a value matching `pattern`?"""
    keep = np.ones(len(filters), dtype=bool)
    grams = pattern_grams(pattern, gram_size)
    if not grams:
        return keep
    hashes = murmur.hash_array(pa.array(grams, pa.string()), _STRING)
    for h in hashes:  # every gram must be there: one test per gram of the pattern
        keep &= filters.may_contain(np.array([h], dtype=np.uint64))
        if not keep.any():
            break
    return keep
