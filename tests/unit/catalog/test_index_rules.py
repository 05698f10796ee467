"""Index rules: bloom filter column order as Doris's HashSet gives it, index clause checks."""

import pytest

from catalog.errors import AnalysisError
from catalog.index_rules import analyze_bloom_filter, java_hash_set_order
from catalog.model import Column
from storage.types import DataType


def test_java_hash_set_order():
    # String.hashCode: "k" 107, "s" 115, "u" 117 -> buckets 11, 3, 5 of 16
    assert java_hash_set_order(["k", "u", "s"]) == ["s", "u", "k"]
    # "k1" 3366 -> 6, "k2" 3367 -> 7, "v1" 3707 -> 11 (h ^ h >>> 16 changes nothing here)
    assert java_hash_set_order(["v1", "k2", "k1"]) == ["k1", "k2", "v1"]
    # same bucket: insertion order ("Aa" and "BB" both hash to 2112)
    assert java_hash_set_order(["BB", "Aa"]) == ["BB", "Aa"]
    names = [f"c{i}" for i in range(20)]  # more than 12 entries: the table has 32 buckets
    assert sorted(java_hash_set_order(names)) == sorted(names)


def test_bloom_filter_properties_are_normalised_and_checked():
    cols = [Column("K", DataType.of("INT"), True), Column("s", DataType.of("VARCHAR", 5))]
    props = {"bloom_filter_columns": " s ,k"}
    analyze_bloom_filter(props, cols, "DUP_KEYS")
    assert props["bloom_filter_columns"] == "s, K"
    props = {"bloom_filter_columns": "", "bloom_filter_fpp": "0.0001"}
    analyze_bloom_filter(props, cols, "DUP_KEYS")
    assert props["bloom_filter_columns"] == ""
    with pytest.raises(AnalysisError, match="Reduplicated bloom filter column: k"):
        analyze_bloom_filter({"bloom_filter_columns": "K, k"}, cols, "DUP_KEYS")
