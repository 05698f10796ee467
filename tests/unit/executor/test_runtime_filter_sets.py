"""executor/runtime_filter._predicates: which exact key sets a runtime filter keeps. A set
checked with storage's lookup table (span up to MAX_LOOKUP_SPAN) is kept up to MAX_SET_VALUES
keys; one over a wider span, checked by binary search, only up to MAX_SEARCH_VALUES; a set
denser than 1/SET_DENSITY of its span never (min/max says almost as much)."""

import numpy as np
import pyarrow as pa

from executor import runtime_filter as rf


def _kinds(keys: np.ndarray) -> list[str]:
    preds = rf._predicates("k", pa.chunked_array([pa.array(keys, pa.int64())]))
    return ["set" if p.array is not None else p.op for p in preds]


def test_a_large_set_over_a_lookup_span_is_kept():
    keys = np.arange(0, 1_500_000, 5)  # 300k keys, 20% of a 1.5M span (SSB SF 10's customers)
    assert _kinds(keys) == [">=", "<=", "set"]


def test_a_large_set_over_a_wide_span_is_min_max_only():
    keys = np.arange(0, 60_000_000, 150)  # 400k keys over 60M: binary search per row, no set
    assert len(keys) > rf.MAX_SEARCH_VALUES
    assert _kinds(keys) == [">=", "<="]


def test_a_smaller_set_over_a_wide_span_is_searched():
    keys = np.arange(0, 60_000_000, 600)  # 100k keys over 60M
    assert _kinds(keys) == [">=", "<=", "set"]


def test_a_dense_set_gives_min_max_only():
    keys = np.arange(0, 10_000)[np.arange(10_000) % 3 != 0]  # 2/3 of the span
    assert _kinds(keys) == [">=", "<="]


def test_few_keys_are_an_in_list():
    (pred,) = rf._predicates("k", pa.chunked_array([pa.array([5, 1, 5, 9])]))
    assert pred.op == "in" and pred.array.to_pylist() == [1, 5, 9]


def test_string_keys_get_min_max_only():
    keys = pa.array([f"k{i:05d}" for i in range(5000)])
    preds = rf._predicates("k", pa.chunked_array([keys]))
    assert [(p.op, p.values) for p in preds] == [(">=", ("k00000",)), ("<=", ("k04999",))]
