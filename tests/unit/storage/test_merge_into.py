"""Folding newer rows into a kept merge (storage/merge_into.py): the result equals the general
path's sort and merge (storage/merge.py) row for row, and the path declines what it does not
cover."""

import numpy as np
import pyarrow as pa
import pytest

from storage.memtable import sort_by_key
from storage.merge import merge_sorted
from storage.merge_into import fold_into, kept_keys

KEYS = ["g", "k", "d"]
AGGS = {"s": "SUM", "mx": "MAX", "mn": "MIN", "r": "REPLACE"}


def _rows(rng, n: int, key_span: int) -> pa.Table:
    return pa.table({
        "g": pa.array(rng.integers(0, 10, n), pa.int32()),
        "k": pa.array(rng.integers(0, key_span, n), pa.int64()),
        "d": pa.array(rng.integers(18000, 18010, n).astype(np.int32), pa.int32()).view(pa.date32()),
        "s": pa.array(rng.integers(-120, 120, n), pa.int8()),  # small: SUMs wrap
        "mx": pa.array(rng.integers(0, 1000, n), pa.int64()),
        "mn": pa.array(rng.integers(0, 1000, n), pa.int16()),
        "r": pa.array(rng.integers(0, 1000, n), pa.uint32()),
    })


def _merge(table: pa.Table) -> pa.Table:
    return merge_sorted(sort_by_key(table, KEYS), KEYS, AGGS)


@pytest.mark.parametrize("seed", range(40))
def test_fold_equals_sort_and_merge(seed):
    rng = np.random.default_rng(seed)
    kept = _merge(_rows(rng, int(rng.integers(1, 3000)), int(rng.integers(1, 400))))
    state = kept_keys(kept, KEYS)
    # newer rows in version order, several loads, keys repeating within and across them and
    # reaching beyond the kept key ranges
    newer = pa.concat_tables([_rows(rng, int(rng.integers(0, 60)), int(rng.integers(1, 900)))
                              for _ in range(int(rng.integers(1, 5)))])
    merged, merged_state = fold_into(kept, state, newer, KEYS, AGGS)
    assert merged.equals(_merge(pa.concat_tables([kept, newer])))
    # the codes kept with the result order its rows and serve the next fold
    assert np.all(np.diff(merged_state.codes) > 0) and len(merged_state.codes) == merged.num_rows
    later = _rows(rng, 30, 900)
    again, _ = fold_into(merged, merged_state, later, KEYS, AGGS)
    assert again.equals(_merge(pa.concat_tables([kept, newer, later])))


@pytest.mark.parametrize("seed", range(5))
def test_newer_rows_of_kept_keys_only(seed):
    """Every newer key is kept already: no row is added (the key columns are shared, not
    copied) and the folds change the result, never the kept table."""
    rng = np.random.default_rng(seed)
    kept = _merge(_rows(rng, 2000, 300))
    before = kept.to_pydict()
    state = kept_keys(kept, KEYS)
    newer = kept.take(pa.array(rng.integers(0, kept.num_rows, 50)))
    merged, _ = fold_into(kept, state, newer, KEYS, AGGS)
    assert merged.equals(_merge(pa.concat_tables([kept, newer])))
    assert kept.to_pydict() == before


def test_no_newer_rows_is_the_kept_table():
    kept = _merge(_rows(np.random.default_rng(1), 100, 50))
    state = kept_keys(kept, KEYS)
    assert fold_into(kept, state, kept.schema.empty_table(), KEYS, AGGS) == (kept, state)


def test_declines_what_the_general_path_must_merge():
    rng = np.random.default_rng(2)
    kept = _merge(_rows(rng, 200, 50))
    state = kept_keys(kept, KEYS)
    newer = _rows(rng, 20, 50)
    with_null = newer.set_column(3, "s", pa.array([None] * 20, pa.int8()))
    assert fold_into(kept, state, with_null, KEYS, AGGS) is None  # a NULL value
    assert fold_into(kept, state, newer, KEYS, {**AGGS, "r": "REPLACE_IF_NOT_NULL"}) is None
    floats = {n: newer.column(n) for n in newer.column_names} | {"mx": pa.array(np.ones(20))}
    assert fold_into(kept, state, pa.table(floats), KEYS, AGGS) is None  # another type
    text = pa.table({"k": ["a", "b"], "v": pa.array([1, 2], pa.int64())})
    assert kept_keys(merge_sorted(text, ["k"], {"v": "SUM"}), ["k"]) is None  # a VARCHAR key
    wide = pa.table({"a": pa.array([0, 2**40], pa.int64()), "b": pa.array([0, 2**40], pa.int64()),
                     "v": pa.array([1, 1], pa.int64())})
    assert kept_keys(wide, ["a", "b"]) is None  # keys spanning more than 63 bits
