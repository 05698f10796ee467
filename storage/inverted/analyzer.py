"""Text analysis of an inverted index's `parser` (Doris `InvertedIndexUtil` properties).

An `Analyzer` turns a string column into a list<string> column of terms, vectorised with
pyarrow.compute (no loop over rows):

    none     the whole value is one term (lower-cased only with "lower_case" = "true")
    english  runs of ASCII letters and digits (Lucene's SimpleAnalyzer as Doris configures it);
             lower-cased unless "lower_case" = "false"
    unicode  runs of Unicode letters and digits; every Han / Hiragana / Katakana / Hangul
    standard character is a term of its own; lower-cased unless "lower_case" = "false"
    chinese  APPROXIMATE: Doris segments Chinese words with Jieba; minidoris has no dictionary
             and analyses as `unicode` (one term per Chinese character), so a MATCH_ANY of a
             word matches rows holding any of its characters and MATCH_PHRASE of the word
             matches its characters in order
Empty terms are dropped; a NULL value has no terms (a NULL list).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

PARSERS = ("none", "english", "unicode", "chinese", "standard")
_CJK = r"([\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}])"
_NOT_ENGLISH = r"[^A-Za-z0-9]+"
_NOT_WORD = r"[^\pL\pN]+"


@dataclass(frozen=True)
class Analyzer:
    """How one index (or a MATCH on a column without one) splits values into terms."""

    parser: str = "none"
    lower_case: bool | None = None  # None: the parser's default

    @staticmethod
    def of(properties: dict[str, str] | None) -> Analyzer:
        """The analyzer of an index's PROPERTIES (None or {}: parser none)."""
        props = properties or {}
        lower = props.get("lower_case")
        return Analyzer(props.get("parser", "none").lower(),
                        None if lower is None else lower.lower() == "true")

    @property
    def lowers(self) -> bool:
        if self.lower_case is not None:
            return self.lower_case
        return self.parser != "none"

    def tokens(self, values: pa.Array | pa.ChunkedArray) -> pa.ListArray:
        """The terms of each value (list<string>, NULL for a NULL value)."""
        if isinstance(values, pa.ChunkedArray):
            values = values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
        if not pa.types.is_string(values.type) and not pa.types.is_large_string(values.type):
            values = values.cast(pa.string())
        if self.lowers:
            values = pc.utf8_lower(values)
        if self.parser == "none":
            valid = np.asarray(values.is_valid(), dtype=np.int32)
            offsets = np.concatenate([[0], np.cumsum(valid)]).astype(np.int32)
            lists = pa.ListArray.from_arrays(pa.array(offsets), values.drop_null(),
                                             mask=values.is_null())
            return _drop_empty(lists)
        if self.parser == "english":
            lists = pc.split_pattern_regex(values, _NOT_ENGLISH)
        else:  # unicode, standard, chinese (approximate)
            lists = pc.split_pattern_regex(pc.replace_substring_regex(values, _CJK, r" \1 "),
                                           _NOT_WORD)
        return _drop_empty(lists)

    def query_terms(self, query: str) -> list[str]:
        """The terms of a MATCH's query string."""
        return self.tokens(pa.array([query])).flatten().to_pylist()


def _drop_empty(lists: pa.ListArray) -> pa.ListArray:
    """`lists` without empty-string items (splits leave them at the edges)."""
    flat = pc.list_flatten(lists)
    if len(flat) == 0 or pc.min(pc.utf8_length(flat)).as_py() > 0:
        return lists
    parents = pc.list_parent_indices(lists)
    keep = pc.greater(pc.utf8_length(flat), 0)
    kept_parents = pc.filter(parents, keep).to_numpy(zero_copy_only=False)
    counts = np.bincount(kept_parents, minlength=len(lists))
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    return pa.ListArray.from_arrays(pa.array(offsets), pc.filter(flat, keep),
                                    mask=lists.is_null())
