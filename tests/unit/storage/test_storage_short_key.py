"""Short key index: memcomparable encoding order, and row-range narrowing with its counters."""

import datetime as dt
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from storage_testutil import column, read_all, schema, write_and_open

from storage import ColumnPredicate as P
from storage import DataType
from storage.segment.short_key import as_sortable, encode_keys


def null_first(value):
    return (value is not None, value if value is not None else 0)


def check_order(values: list, dtype: DataType, width: int, cut=lambda v: v) -> None:
    """Encoded keys sort exactly as the values (NULL first), equal iff the cut values are."""
    ordered = sorted(values, key=null_first)
    encoded = as_sortable(encode_keys([pa.array(ordered, type=dtype.arrow())], [dtype], [width]))
    for a, b, ea, eb in zip(ordered, ordered[1:], encoded, encoded[1:]):
        ca = None if a is None else cut(a)
        cb = None if b is None else cut(b)
        assert ea <= eb, (a, b)
        assert (ea == eb) == (ca == cb), (a, b)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(-2**31, 2**31 - 1)), max_size=50))
def test_int_order(values):
    check_order(values, DataType("INT"), 4)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(-(10**38 - 1), 10**38 - 1)), max_size=50))
def test_largeint_order(values):
    check_order(values, DataType("LARGEINT"), 16)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(st.none(), st.text(alphabet="ab\x00é", max_size=8)), max_size=50))
def test_string_order_with_nul_bytes_and_prefixes(values):
    width = 5
    check_order(values, DataType.of("VARCHAR", 30), width, cut=lambda v: v.encode()[:width])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(st.none(), st.floats(allow_nan=False, width=32)), max_size=50))
def test_float_order(values):
    check_order(values, DataType("FLOAT"), 4, cut=lambda v: v + 0.0)


def test_other_fixed_types_order():
    check_order([None, True, False, True], DataType("BOOLEAN"), 1)
    check_order([-128, 127, 0, None, -1], DataType("TINYINT"), 1)
    check_order([-2**63, 2**63 - 1, 0, -1, None], DataType("BIGINT"), 8)
    check_order([Decimal("-1.25"), Decimal("1.20"), Decimal("0.01"), None, Decimal("-0.01")],
                DataType.of("DECIMAL", 10, 2), 16)
    check_order([dt.date(1, 1, 1), dt.date(1970, 1, 1), dt.date(1969, 12, 31), None],
                DataType("DATE"), 4)
    check_order([dt.datetime(2020, 1, 1, 0, 0, 0, 1), dt.datetime(2020, 1, 1), None,
                 dt.datetime(1900, 5, 5)], DataType.of("DATETIME", 6), 8)
    check_order([-1e300, 1e300, -0.0, 0.0, float("inf"), float("-inf"), 5e-324],
                DataType("DOUBLE"), 8, cut=lambda v: v + 0.0)


# -- pruning ---------------------------------------------------------------------------------------
N = 100_000


@pytest.fixture(scope="module")
def keyed(tmp_path_factory):
    sch = schema([column("k1", "INT", key=True), column("k2", "BIGINT", key=True),
                  column("name", "VARCHAR", 40, key=True), column("v", "DOUBLE")])
    rng = np.random.default_rng(11)
    k1 = rng.integers(0, 1000, N).astype(np.int32)
    k1[:500] = -7
    k2 = rng.integers(-10**12, 10**12, N)
    name = np.array([f"{'prefix-of-twenty-byt'}{i % 13}" for i in range(N)], dtype=object)
    table = pa.table({"k1": pa.array(k1), "k2": pa.array(k2), "name": pa.array(name),
                      "v": pa.array(rng.random(N))})
    mask = np.zeros(N, bool)
    mask[rng.integers(0, N, 300)] = True
    table = table.set_column(0, "k1", pa.array(k1, mask=mask))  # some NULL k1
    order = pc.sort_indices(table, [(k, "ascending", "at_start") for k in ("k1", "k2", "name")])
    table = table.take(order)
    return write_and_open(tmp_path_factory.mktemp("sk"), sch, table), table


def expect(table, *conditions):
    mask = conditions[0]
    for c in conditions[1:]:
        mask = pc.and_(mask, c)
    return table.filter(pc.fill_null(mask, False))


def test_equality_on_first_key_prunes_most_rows(keyed):
    reader, table = keyed
    got, stats = read_all(reader, [P("k1", "=", (500,))])
    want = expect(table, pc.equal(table["k1"], 500))
    assert got.equals(want)
    assert stats.rows_short_key_filtered == N - want.num_rows
    assert stats.rows_read == want.num_rows  # the binary search is exact on an INT key
    assert stats.rows_short_key_filtered > 0.99 * N


def test_equality_prefix_then_range_on_next_key(keyed):
    reader, table = keyed
    preds = [P("k1", "=", (123,)), P("k2", ">", (0,)), P("k2", "<=", (5 * 10**11,))]
    got, stats = read_all(reader, preds)
    want = expect(table, pc.equal(table["k1"], 123), pc.greater(table["k2"], 0),
                  pc.less_equal(table["k2"], 5 * 10**11))
    assert got.equals(want)
    assert stats.rows_read == want.num_rows


def test_in_list_expands_to_several_key_ranges(keyed):
    reader, table = keyed
    got, stats = read_all(reader, [P("k1", "in", (3, 999, 40, 100_000))])
    want = expect(table, pc.is_in(table["k1"], pa.array([3, 999, 40], pa.int32())))
    assert got.equals(want)
    assert stats.rows_read == want.num_rows


def test_is_null_and_range_on_first_key(keyed):
    reader, table = keyed
    got, stats = read_all(reader, [P("k1", "is_null")])
    assert got.equals(expect(table, pc.is_null(table["k1"])))
    assert stats.rows_read == got.num_rows == table["k1"].null_count
    got, stats = read_all(reader, [P("k1", ">=", (-7,)), P("k1", "<", (2,))])
    want = expect(table, pc.greater_equal(table["k1"], -7), pc.less(table["k1"], 2))
    assert got.equals(want) and stats.rows_read == want.num_rows


def test_cut_string_key_keeps_results_exact(keyed):
    reader, table = keyed
    value = "prefix-of-twenty-byt7"  # shares its 20-byte prefix with 12 other names
    preds = [P("k1", "=", (-7,)), P("k2", "=", (int(table["k2"][3].as_py()),)),
             P("name", "=", (value,))]
    got, _ = read_all(reader, preds)
    want = expect(table, pc.equal(table["k1"], -7), pc.equal(table["k2"], table["k2"][3]),
                  pc.equal(table["name"], value))
    assert got.equals(want)


def test_predicates_that_cannot_use_the_index(keyed):
    reader, table = keyed
    got, stats = read_all(reader, [P("k2", "=", (int(table["k2"][50_000].as_py()),))])
    assert stats.rows_short_key_filtered == 0 and got.num_rows >= 1
    got, stats = read_all(reader, [P("k1", "=", (2.5,))])  # not an INT: no row can equal it
    assert got.num_rows == 0 and stats.rows_short_key_filtered == 0
    got, stats = read_all(reader, [P("k1", "=", (None,))])  # = NULL is never true
    assert got.num_rows == 0


@pytest.mark.parametrize("interval", [1, 7, 1024, 10**6])
def test_any_interval_finds_the_same_rows(tmp_path, interval):
    sch = schema([column("k", "INT", key=True)])
    keys = np.repeat(np.arange(300, dtype=np.int32), 7)
    table = pa.table({"k": pa.array(keys)})
    reader = write_and_open(tmp_path, sch, table, interval=interval)
    for lo, hi in [(-5, 0), (0, 0), (17, 40), (299, 400), (150, 149)]:
        got, stats = read_all(reader, [P("k", ">=", (lo,)), P("k", "<=", (hi,))])
        want = np.count_nonzero((keys >= lo) & (keys <= hi))
        assert got.num_rows == want == stats.rows_read


OPS = {"=": lambda a, b: a == b, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
       ">": lambda a, b: a > b, ">=": lambda a, b: a >= b, "!=": lambda a, b: a != b}


@pytest.mark.parametrize("interval", [1, 2, 5])
def test_key_ranges_exhaustively_on_a_small_grid(tmp_path, interval):
    """Every operator and value on k1, and `k1 = a AND k2 op b`, against a Python filter."""
    domain = [None, -2, -1, 0, 1, 2]
    rows = [(a, b) for a in domain for b in domain for _ in range(2)]
    sch = schema([column("k1", "INT", key=True), column("k2", "SMALLINT", key=True)])
    table = pa.table({"k1": pa.array([r[0] for r in rows], pa.int32()),
                      "k2": pa.array([r[1] for r in rows], pa.int16())})
    reader = write_and_open(tmp_path, sch, table, interval=interval)

    def check(preds, want):
        got, stats = read_all(reader, preds)
        assert list(zip(got["k1"].to_pylist(), got["k2"].to_pylist())) == want, preds
        assert stats.rows_read == len(want), preds  # integer keys: the key range is exact

    for op, fn in OPS.items():
        for v in range(-3, 4):
            if op != "!=":
                check([P("k1", op, (v,))], [r for r in rows if r[0] is not None and fn(r[0], v)])
            for a in (None, -1, 2):
                first = P("k1", "is_null") if a is None else P("k1", "=", (a,))
                want = [r for r in rows if r[0] == a and r[1] is not None and fn(r[1], v)]
                if op != "!=":
                    check([first, P("k2", op, (v,))], want)
