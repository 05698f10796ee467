"""A segment column's inverted index: its terms, sorted, each with a Roaring bitmap of rowids.

Written with the segment (writer.py) for a column the tablet schema gives an INVERTED index,
or into a side file by BUILD INDEX (side_index.py) for segments written before. The pages are
a bitmap index's (bitmap_index.py): BITMAP_DICT pages of the sorted terms (STRING), BITMAP
pages of one bitmap per term, then the bitmap of the NULL rows. The column meta (footer or side
file) holds

    "inverted_index": {"index_id": id, "properties": {parser, lower_case, ...},
                       "dict_count": K, "dict_pages": [...], "bitmap_pages": [...]}

Terms are the column's analyzer's (analyzer.py; non-string columns are indexed by their text,
parser none). Answers (`rows`), as row bitmaps: MATCH_ANY the union of the query terms' bitmaps,
MATCH_ALL their intersection, MATCH_PHRASE / MATCH_PHRASE_PREFIX the rows holding every term
(the last one as a prefix: the union over the dictionary range it starts), MATCH_REGEXP the
union over the terms the pattern matches. Phrases keep no positions, so their answer is a
superset that the exact MATCH filter above the scan narrows; the others are exact.
"""

from __future__ import annotations

import bisect
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyroaring import BitMap

from storage.inverted.analyzer import Analyzer
from storage.segment import bitmap_index
from storage.segment.bitmap_index import BitmapIndex, Loader
from storage.types import DataType

TERM_TYPE = DataType("STRING")


def build(arr: pa.Array, analyzer: Analyzer) -> tuple[pa.Array, list[bytes]]:
    """Sorted distinct terms and serialized bitmaps (one per term, then the NULL rows')."""
    lists = analyzer.tokens(arr)
    flat = pc.list_flatten(lists)
    parents = np.asarray(pc.list_parent_indices(lists), dtype=np.int64)
    uniq = pc.unique(flat)
    uniq = uniq.take(pc.array_sort_indices(uniq))
    codes = np.asarray(pc.index_in(flat, value_set=uniq), dtype=np.int64) if len(flat) else \
        np.empty(0, dtype=np.int64)
    order = np.lexsort((parents, codes))
    bounds = np.concatenate([[0], np.cumsum(np.bincount(codes, minlength=len(uniq)))])
    sorted_rows = parents[order]
    blobs = [bitmap_index._bitmap(sorted_rows[a:b]).serialize()
             for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist())]
    nulls = np.flatnonzero(np.asarray(arr.is_null())) if arr.null_count else \
        np.empty(0, dtype=np.int64)
    blobs.append(bitmap_index._bitmap(nulls).serialize())
    return uniq.cast(pa.string()), blobs


def write(arr: pa.Array, index_id: int, properties: dict, page_size: int, compress: bool,
          write_page: Callable[[bytes], tuple[int, int]]) -> dict:
    """Build and write one segment column's inverted index; returns its meta."""
    uniq, blobs = build(arr, Analyzer.of(properties))
    meta = bitmap_index.write_pages(uniq, blobs, TERM_TYPE, page_size, compress, write_page)
    return {"index_id": int(index_id), "properties": dict(properties), **meta}


class InvertedIndex:
    """One segment column's inverted index, read through a scan's page loader."""

    def __init__(self, meta: dict, num_rows: int):
        self.meta = meta
        self.properties = dict(meta.get("properties", {}))
        self.analyzer = Analyzer.of(self.properties)
        self.terms = BitmapIndex(meta, TERM_TYPE, num_rows)

    def _term_rows(self, term: str, load: Loader) -> BitMap:
        words = self.terms.dictionary(load)
        i = bisect.bisect_left(words, term)
        return self.terms.bitmap(i, load) if i < len(words) and words[i] == term else BitMap()

    def _prefix_rows(self, prefix: str, load: Loader) -> BitMap:
        words = self.terms.dictionary(load)
        lo = bisect.bisect_left(words, prefix)
        hi = lo
        while hi < len(words) and words[hi].startswith(prefix):
            hi += 1
        return BitMap.union(BitMap(), *[self.terms.bitmap(i, load) for i in range(lo, hi)])

    def rows(self, kind: str, query: str, load: Loader) -> BitMap:
        """Rows that may match `column kind query` (exact but for the phrase kinds)."""
        if kind == "match_regexp":
            words = self.terms.dictionary(load)
            hit = np.flatnonzero(np.asarray(pc.fill_null(
                pc.match_substring_regex(pa.array(words, pa.string()), query), False)))
            return BitMap.union(BitMap(), *[self.terms.bitmap(int(i), load) for i in hit])
        terms = self.analyzer.query_terms(query)
        if not terms:
            return BitMap()
        if kind == "match_any":
            return BitMap.union(BitMap(), *[self._term_rows(t, load) for t in terms])
        last = len(terms) - 1
        sets = [self._prefix_rows(t, load) if kind == "match_phrase_prefix" and j == last
                else self._term_rows(t, load) for j, t in enumerate(terms)]
        return BitMap.intersection(*sets) if len(sets) > 1 else sets[0]
