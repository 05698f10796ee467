"""IN value sets (lookup table, binary search, hash set) and the progressive AND of predicate
masks agree with Arrow's is_in and a plain AND, NULLs included."""

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from storage import ColumnPredicate as P
from storage.predicate import combined_mask, prepare
from storage.types import DataType
from storage.value_set import ValueSet


@pytest.mark.parametrize("span", [1000, 10**9])  # lookup table / binary search
def test_integer_sets_match_is_in(span):
    rng = np.random.default_rng(7)
    values = pa.array(rng.integers(-span, span, 500), pa.int64())
    rows = pa.array(np.concatenate([rng.integers(-2 * span, 2 * span, 5000),
                                    values.to_numpy()[:100]]), pa.int64())
    rows = pc.if_else(pa.array(rng.random(len(rows)) < 0.1), pa.nulls(len(rows), pa.int64()), rows)
    got = ValueSet(values).contains(rows)
    assert got.to_pylist() == pc.is_in(rows, value_set=values, skip_nulls=True).to_pylist()
    assert got.null_count == 0


def test_string_sets_use_arrow():
    values = pa.array([f"v{i}" for i in range(100)])
    rows = pa.array(["v1", None, "x", "v99"])
    assert ValueSet(values).contains(rows).to_pylist() == [True, False, False, True]


def test_array_predicate_prepares_like_values():
    dtype = DataType.of("INT")
    arr = pa.array(list(range(0, 300, 3)), pa.int64())  # cast safely to the column's int32
    a = prepare(P("c", "in", array=arr), dtype)
    b = prepare(P("c", "in", tuple(range(0, 300, 3))), dtype)
    assert a.key_values == b.key_values
    rows = pa.array(list(range(0, 400)), pa.int32())
    assert a.evaluate(rows).to_pylist() == b.evaluate(rows).to_pylist()
    assert prepare(P("c", "in", array=pa.array([], pa.int32())), dtype).never_true


def test_combined_mask_is_the_and_of_all_predicates():
    rng = np.random.default_rng(3)
    k = pa.array(rng.integers(0, 1000, 20000), pa.int32())
    v = pa.array(rng.integers(0, 1000, 20000), pa.int32())
    dtype = DataType.of("INT")
    preds = [prepare(P("k", "<", (100,)), dtype), prepare(P("v", "in", tuple(range(0, 1000, 7))),
                                                          dtype),
             prepare(P("v", ">=", (10,)), dtype)]
    got = combined_mask(preds, {"k": k, "v": pa.chunked_array([v.slice(0, 5), v.slice(5)])})
    kn, vn = k.to_numpy(), v.to_numpy()
    assert got.to_numpy(zero_copy_only=False).tolist() == \
        ((kn < 100) & (vn % 7 == 0) & (vn >= 10)).tolist()
