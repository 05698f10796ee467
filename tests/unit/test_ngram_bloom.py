"""storage/segment/ngram_bloom.py: the grams a LIKE pattern yields, and page filters that keep
every page holding a match."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from storage.segment import bloom_filter, ngram_bloom


def test_pattern_grams_cut_runs_at_wildcards_and_read_escapes():
    assert ngram_bloom.pattern_grams("%hello%", 3) == ["ell", "hel", "llo"]
    assert ngram_bloom.pattern_grams("%ab_cd%", 3) == []  # no run of 3 characters
    assert ngram_bloom.pattern_grams("%a\\%bc%", 3) == ["%bc", "a%b"]
    assert ngram_bloom.pattern_grams("%éab%", 2) == ["ab", "éa"]  # characters, not bytes
    assert ngram_bloom.pattern_grams("%", 1) == []


def test_pages_holding_a_match_are_kept():
    values = pa.array(["apple pie", "banana", None, "cherry tart", "date", "apple"] * 50)
    starts = np.arange(0, 300, 30)
    ends = starts + 30
    body = ngram_bloom.compute(values, starts, ends, 3, 64)
    filters = bloom_filter.decode(body)
    assert len(filters) == 10
    for pattern in ("%apple%", "%erry t%", "%nan%", "%pie"):
        assert ngram_bloom.pages_kept(filters, pattern, 3).all()
    # a page without the grams of a pattern is dropped (a large filter: no false positive)
    body = ngram_bloom.compute(pa.array(["xyz"] * 30 + ["abc"] * 30), np.array([0, 30]),
                               np.array([30, 60]), 3, 4096)
    assert ngram_bloom.pages_kept(bloom_filter.decode(body), "%abc%", 3).tolist() == [False, True]
