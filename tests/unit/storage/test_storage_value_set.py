"""IN value sets (lookup table, binary search, hash set) and the progressive AND of predicate
masks agree with Arrow's is_in and a plain AND, NULLs included."""

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from storage import ColumnPredicate as P
from storage.predicate import prepare
from storage.row_filter import combined_mask
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


def test_row_filter_skips_comparisons_a_set_implies_and_keeps_exactness():
    from storage.row_filter import _evaluation_order
    dtype = DataType.of("INT")
    keys = pa.array(list(range(100, 400, 3)), pa.int32())
    in_set = prepare(P("k", "in", array=keys), dtype)
    low = prepare(P("k", ">=", (100,)), dtype)       # implied by the set (min 100)
    high = prepare(P("k", "<=", (300,)), dtype)      # not implied (max 397)
    order = _evaluation_order([low, high, in_set])
    assert low not in order and high in order and in_set in order
    rows = pa.array(np.arange(0, 500, dtype=np.int32))
    got = combined_mask([low, high, in_set], {"k": rows}).to_numpy(zero_copy_only=False)
    r = rows.to_numpy()
    assert got.tolist() == ((r >= 100) & (r <= 300) & np.isin(r, keys.to_numpy())).tolist()


@pytest.mark.parametrize("kind,values", [
    ("DATE", [__import__("datetime").date(2020, 1, d) for d in range(1, 29)]),
    ("DATETIME", [__import__("datetime").datetime(2020, 1, 1, h, 30) for h in range(24)]),
    ("DOUBLE", [x / 4 for x in range(-20, 20)]),
    ("BIGINT", list(range(-50, 50))),
    ("DECIMAL", [__import__("decimal").Decimal(x) / 100 for x in range(-300, 300, 7)]),
])
def test_numpy_comparisons_match_arrow(kind, values):
    """Comparisons run on numpy values (dates as days, datetimes as ticks) exactly as Arrow's
    kernels, on all rows and on survivors only."""
    dtype = DataType.of(kind, 15, 2) if kind == "DECIMAL" else DataType.of(kind)
    arr = pa.array(values, dtype.arrow()).slice(1)  # an offset, as page slices have
    values = values[1:]
    pivot = values[len(values) // 3]
    for op in ("=", "!=", "<", "<=", ">", ">="):
        pred = prepare(P("c", op, (pivot,)), dtype)
        assert pred.number is not None
        expect = pred.evaluate(arr).to_numpy(zero_copy_only=False)
        assert pred.evaluate_numpy(arr).tolist() == expect.tolist()
        live = np.arange(0, len(values), 3)
        assert pred.evaluate_at(arr, live).tolist() == expect[live].tolist()


def test_zone_map_numpy_rules_match_the_arrow_rules():
    from storage.segment import zone_map
    rng = np.random.default_rng(5)
    lo = np.sort(rng.integers(0, 1000, 40)).astype(np.int32)
    zm = zone_map.ZoneMaps(pa.array(lo), pa.array(lo + rng.integers(0, 50, 40).astype(np.int32)),
                           np.zeros(40, bool), np.ones(40, bool))
    dtype = DataType.of("INT")
    preds = [prepare(P("c", op, (int(v),)), dtype) for op in ("=", "!=", "<", "<=", ">", ">=")
             for v in (lo[0], lo[7], 500, 2000)]
    preds.append(prepare(P("c", "in", array=pa.array(rng.integers(0, 1100, 300), pa.int32())),
                         dtype))
    for pred in preds:
        numeric = zone_map._numeric_condition(zm.numbers(), pred)
        assert numeric is not None
        assert numeric.tolist() == zone_map._arrow_condition(zm, pred).tolist(), pred.op


@pytest.mark.parametrize("values", [
    np.random.default_rng(1).integers(1, 60_000, 15_000),        # dense: bitmap
    np.random.default_rng(2).integers(-2**40, 2**40, 5_000),      # sparse: sort
    np.array([7, -3, 7, 0, -3], dtype=np.int8),
])
def test_distinct_sorted_dense_and_sparse(values):
    from storage.value_set import distinct_sorted
    arr = pa.array(values, mask=np.arange(len(values)) % 11 == 0)
    got = distinct_sorted(pa.chunked_array([arr.slice(0, 3), arr.slice(3)]))
    assert got.type == arr.type
    assert got.to_pylist() == sorted(set(arr.drop_null().to_pylist()))


def test_index_probes_skip_huge_sets():
    """A runtime filter's set of more than MAX_PROBE_VALUES values is checked on the rows, not
    probed value by value in bloom filters or bitmap indexes (and never turned into Python)."""
    from storage.predicate import MAX_PROBE_VALUES
    small = prepare(P("k", "in", array=pa.array(np.arange(10), pa.int32())), DataType.of("INT"))
    assert small.probe_values == list(range(10))
    big = prepare(P("k", "in", array=pa.array(np.arange(0, 4 * (MAX_PROBE_VALUES + 1), 4),
                                              pa.int32())), DataType.of("INT"))
    assert big.probe_values is None and big.value_set is not None
    assert big.value_set.contains_numpy(pa.array([0, 1, 4], pa.int32())).tolist() == \
        [True, False, True]
    assert "_keys" in big.value_set.__dict__ and big.value_set._keys is None
