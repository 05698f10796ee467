"""MATCH predicates over analysed values: a boolean mask per row, vectorised.

    MATCH_ANY 'q'            some term of the query is a term of the value (MATCH is MATCH_ANY)
    MATCH_ALL 'q'            every term of the query is a term of the value
    MATCH_PHRASE 'q'         the query's terms occur consecutively, in order
    MATCH_PHRASE_PREFIX 'q'  as MATCH_PHRASE, the last query term being a prefix of its term
    MATCH_REGEXP 'p'         some term contains a match of the regular expression p (RE2)

The value's terms come from the column's analyzer (analyzer.py), so do the query's (MATCH_REGEXP
takes its pattern as is). A query without terms matches no row; a NULL value gives NULL. The
row loop is pyarrow's and numpy's: terms are flattened with their row numbers, compared to the
few query terms, and folded back per row.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from storage.inverted.analyzer import Analyzer

KINDS = ("match_any", "match_all", "match_phrase", "match_phrase_prefix", "match_regexp")


def sql_kind(kind: str | None) -> str:
    """The function name of sqlglot's `Match` kind (None: plain MATCH, i.e. MATCH_ANY)."""
    return "match_" + (kind or "any").lower()


def evaluate(kind: str, values: pa.Array | pa.ChunkedArray, query: str,
             analyzer: Analyzer) -> pa.Array:
    """BOOLEAN per row: does the value match `query` (NULL where the value is NULL)."""
    lists = analyzer.tokens(values)
    rows = rows_matching(kind, lists, query, analyzer)
    mask = np.zeros(len(lists), dtype=bool)
    mask[rows] = True
    return pa.array(mask, mask=np.asarray(lists.is_null()) if lists.null_count else None)


def rows_matching(kind: str, lists: pa.ListArray, query: str, analyzer: Analyzer) -> np.ndarray:
    """Row numbers (ascending, int64) of the lists of terms that match."""
    flat = pc.list_flatten(lists)
    parents = np.asarray(pc.list_parent_indices(lists), dtype=np.int64)
    if kind == "match_regexp":
        hit = np.asarray(pc.fill_null(pc.match_substring_regex(flat, query), False))
        return np.unique(parents[hit])
    terms = analyzer.query_terms(query)
    if not terms:
        return np.empty(0, dtype=np.int64)
    if kind == "match_any":
        hit = np.asarray(pc.is_in(flat, value_set=pa.array(terms, flat.type)))
        return np.unique(parents[hit])
    if kind == "match_all":
        rows = None
        for term in dict.fromkeys(terms):
            found = np.unique(parents[np.asarray(pc.equal(flat, term))])
            rows = found if rows is None else np.intersect1d(rows, found, assume_unique=True)
        return rows
    if kind in ("match_phrase", "match_phrase_prefix"):
        return _phrase_rows(flat, parents, terms, kind == "match_phrase_prefix")
    raise ValueError(f"unknown match kind {kind}")


def _phrase_rows(flat: pa.Array, parents: np.ndarray, terms: list[str],
                 prefix: bool) -> np.ndarray:
    """Rows where terms[0], terms[1], ... sit at consecutive positions of one row."""
    n, k = len(flat), len(terms)
    if n < k:
        return np.empty(0, dtype=np.int64)
    starts = np.ones(n - k + 1, dtype=bool)
    for j, term in enumerate(terms):
        if prefix and j == k - 1:
            eq = np.asarray(pc.starts_with(flat, term))
        else:
            eq = np.asarray(pc.equal(flat, term))
        starts &= eq[j:j + n - k + 1]
        starts &= parents[j:j + n - k + 1] == parents[:n - k + 1]
    return np.unique(parents[:n - k + 1][starts])
