"""Zone maps: page and segment filtering per seed 003 §4.2, with exact results and counters."""

from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from storage_testutil import column, read_all, schema, write_and_open

from storage import ColumnPredicate as P

PAGES = 16
PER_PAGE = 1024  # INT values per 4 KiB page
N = PAGES * PER_PAGE


@pytest.fixture(scope="module")
def segment(tmp_path_factory):
    sch = schema([column("k", "INT", key=True), column("x", "INT"), column("c", "INT"),
                  column("y", "INT")])
    k = np.arange(N, dtype=np.int32)
    y_mask = np.zeros(N, bool)
    y_mask[5 * PER_PAGE:5 * PER_PAGE + 10] = True      # page 5: some NULLs
    y_mask[6 * PER_PAGE:7 * PER_PAGE] = True           # page 6: only NULLs
    table = pa.table({"k": pa.array(k), "x": pa.array(k), "c": pa.array(k // PER_PAGE),
                      "y": pa.array(k, mask=y_mask)})
    return write_and_open(tmp_path_factory.mktemp("zm"), sch, table, page_size=4096), table


def reference(table: pa.Table, pred: P) -> pa.Table:
    col = table[pred.column]
    if pred.op == "is_null":
        return table.filter(pc.is_null(col))
    if pred.op == "is_not_null":
        return table.filter(pc.is_valid(col))
    if pred.op == "in":
        return table.filter(pc.is_in(col, pa.array(pred.values, pa.int32()), skip_nulls=True))
    fn = {"=": pc.equal, "!=": pc.not_equal, "<": pc.less, "<=": pc.less_equal,
          ">": pc.greater, ">=": pc.greater_equal}[pred.op]
    return table.filter(pc.fill_null(fn(col, pred.values[0]), False))


CASES = [
    # predicate, pages the seed's rules drop
    (P("x", "=", (5000,)), 15),                  # only page 4 holds 5000
    (P("x", "!=", (5000,)), 0),                  # every page holds other values
    (P("c", "!=", (3,)), 1),                     # page 3 is all 3s
    (P("x", "<", (2048,)), 14),                  # pages 0, 1
    (P("x", "<=", (2048,)), 13),                 # pages 0, 1, 2
    (P("x", ">", (2047,)), 2),                   # pages 2..15
    (P("x", ">=", (2047,)), 1),                  # pages 1..15
    (P("x", "in", (10, 5000, 10**6)), 14),       # pages 0 and 4
    (P("y", "is_null"), 14),                     # pages 5 and 6
    (P("y", "is_not_null"), 1),                  # page 6 has no value
    (P("y", "=", (-1,)), 14),                    # pages with NULLs are kept (literal rule)
    (P("y", ">", (6 * PER_PAGE + 5,)), 5),       # pages 0-4 drop; 5 and 6 hold NULLs
]


@pytest.mark.parametrize("pred, dropped", CASES, ids=[f"{p.column} {p.op}" for p, _ in CASES])
def test_page_pruning_per_operator(segment, pred, dropped):
    reader, table = segment
    got, stats = read_all(reader, [pred])
    assert got.equals(reference(table, pred))
    assert stats.pages_zone_map_filtered == dropped
    assert stats.rows_zone_map_filtered == dropped * PER_PAGE
    assert stats.rows_short_key_filtered == 0
    assert stats.rows_read == N - dropped * PER_PAGE
    assert stats.rows_total == stats.rows_zone_map_filtered + stats.rows_read
    assert stats.rows_read == stats.rows_conditions_filtered + stats.rows_returned


def test_late_materialization_decodes_only_pages_with_hits(segment):
    reader, table = segment
    got, stats = read_all(reader, [P("c", "=", (9,))], columns=["y", "c"])
    assert got.num_rows == PER_PAGE
    # c: 1 page after pruning; y: the one page holding the surviving rows
    assert stats.pages_read == 2


def test_predicates_on_two_columns_intersect_their_pages(segment):
    reader, table = segment
    preds = [P("x", ">=", (3 * PER_PAGE,)), P("c", "<", (5,))]
    got, stats = read_all(reader, preds)
    assert got.num_rows == 2 * PER_PAGE  # pages 3 and 4
    assert stats.rows_read == 2 * PER_PAGE


def test_segment_zone_map_skips_the_file_without_reading_it(segment):
    reader, _ = segment
    got, stats = read_all(reader, [P("x", ">", (10**9,))])
    assert got.num_rows == 0
    assert stats.segments_filtered == 1 and stats.segments_read == 0
    assert stats.bytes_read == 0 and stats.pages_read == 0
    assert stats.rows_zone_map_filtered == N


def test_nan_pages_are_never_dropped_wrongly(tmp_path):
    sch = schema([column("k", "INT", key=True), column("f", "DOUBLE")])
    values = np.array([1.0, 2.0, np.nan, 2.0] * 1024)
    table = pa.table({"k": pa.array(np.arange(len(values), dtype=np.int32)),
                      "f": pa.array(values)})
    reader = write_and_open(tmp_path, sch, table, page_size=1024)
    for pred in [P("f", "!=", (2.0,)), P("f", ">", (1.5,)), P("f", "=", (1.0,))]:
        got, _ = read_all(reader, [pred])
        col = table["f"]
        fn = {"!=": pc.not_equal, ">": pc.greater, "=": pc.equal}[pred.op]
        want = table.filter(fn(col, pred.values[0]))
        assert got["k"].equals(want["k"])  # k identifies rows (NaN != NaN in Table.equals)


@pytest.mark.parametrize("kind, values, probes", [
    ("INT", [5, 10, None, 30, 31, 100], [[4], [11, 29], [5], [31, 1000], [], [-3, 2, 7, 50]]),
    ("VARCHAR", ["b", "d", None, "x", "zz"], [["a"], ["c", "e"], ["d"], ["zz", "zzz"]]),
    ("DATE", ["2020-01-01", "2020-03-01", "2021-06-30"], [["2019-12-31"], ["2020-02-01"],
                                                          ["2021-06-30", "2030-01-01"]]),
    ("DECIMAL", ["1.50", "2.25", "9.99"], [["1.49"], ["2.25"], ["1.51", "10.00"]]),
])
def test_in_list_matches_the_per_value_rule(kind, values, probes):
    """The sorted-IN check (searchsorted of each min) agrees with checking each value."""
    import datetime as dt
    from decimal import Decimal

    from storage.predicate import prepare
    from storage.segment import zone_map
    from storage.types import DataType

    dtype = {"INT": DataType.of("INT"), "VARCHAR": DataType.of("VARCHAR", 10),
             "DATE": DataType.of("DATE"), "DECIMAL": DataType.of("DECIMAL", 10, 2)}[kind]
    conv = {"DATE": dt.date.fromisoformat, "DECIMAL": Decimal}.get(kind, lambda v: v)
    # pages: consecutive pairs of values as [min, max]; the NULL one is a page without values
    vals = [None if v is None else conv(v) for v in values]
    mins = pa.array(vals[:-1], dtype.arrow())
    maxs = pa.array(vals[1:], dtype.arrow())
    zm = zone_map.ZoneMaps(mins, maxs, np.zeros(len(mins), bool), np.ones(len(mins), bool))
    for probe in [p for p in probes if p]:  # IN () is never true, decided before values
        pred = prepare(P("c", "in", tuple(conv(v) for v in probe)), dtype)
        expected = np.zeros(len(mins), bool)
        for v in pred.key_values:
            lo, hi = mins.to_pylist(), maxs.to_pylist()
            expected |= np.array([a is None or b is None or (a <= v <= b)
                                  for a, b in zip(lo, hi)])
        assert zone_map.keep(zm, pred).tolist() == expected.tolist(), (kind, probe)


@pytest.mark.parametrize("kind,values", [
    ("BIGINT", lambda rng, n: pa.array(rng.integers(-2**62, 2**62, n), pa.int64())),
    ("TINYINT", lambda rng, n: pa.array(rng.integers(-128, 127, n).astype(np.int8))),
    ("DATE", lambda rng, n: pa.array(rng.integers(-1000, 30000, n).astype(np.int32)).view(pa.date32())),
    ("DATETIME", lambda rng, n: pa.array(rng.integers(0, 2**50, n)).view(pa.timestamp("us"))),
    ("DECIMAL", lambda rng, n: pa.array([Decimal(int(v)).scaleb(-2) for v in
                                         rng.integers(-10**17, 10**17, n)], pa.decimal128(18, 2))),
])
def test_numpy_zone_maps_equal_the_per_page_kernels(kind, values):
    # the reduceat path (a column without NULLs) gives the zone maps, page and segment, that
    # pyarrow's min_max per page gives
    from storage.segment import zone_map
    from storage.types import DataType
    dtype = {"DECIMAL": DataType("DECIMAL", precision=18, scale=2),
             "DATETIME": DataType("DATETIME", scale=6)}.get(kind, DataType(kind))
    rng = np.random.default_rng(7)
    for n, per_page in ((1, 8), (1000, 1000), (5000, 333), (4097, 1024)):
        arr = values(rng, n).cast(dtype.arrow())
        starts = np.arange(0, n, per_page, dtype=np.int64)
        ends = np.append(starts[1:], n)
        fast = zone_map.compute(arr, starts, ends, dtype)
        slow_min = [pc.min(arr.slice(s, e - s)) for s, e in zip(starts, ends)]
        slow_max = [pc.max(arr.slice(s, e - s)) for s, e in zip(starts, ends)]
        assert fast.mins.type == arr.type
        assert fast.mins.to_pylist() == [v.as_py() for v in slow_min]
        assert fast.maxs.to_pylist() == [v.as_py() for v in slow_max]
        assert not fast.has_null.any() and fast.has_not_null.all()
        merged = zone_map.merge(fast, dtype)
        assert merged.mins.to_pylist() == [pc.min(arr).as_py()]
        assert merged.maxs.to_pylist() == [pc.max(arr).as_py()]
        assert zone_map.decode(pa.py_buffer(zone_map.encode(fast, dtype)), dtype).mins.equals(fast.mins)


def test_string_equality_keeps_pages_of_nul_strings():
    # numpy turns a bare str compared with an object array into a str_, which drops trailing
    # NULs: '\x00' compared as '' and a page [min '\x00', max 'a\x00'] was skipped
    from storage.predicate import prepare
    from storage.segment import zone_map
    from storage.types import DataType
    dtype = DataType("VARCHAR", length=10)
    arr = pa.array(["", "a", "\x00", "\x00ab", "a\x00", "b"])
    zones = zone_map.compute(arr, np.array([0, 2, 4]), np.array([2, 4, 6]), dtype)
    for value, want in (("\x00", [True, True, False]), ("", [True, False, False]),
                        ("a\x00", [False, False, True]), ("\x00\x00", [True, True, False])):
        got = zone_map.keep(zones, prepare(P("s", "=", [value]), dtype))
        assert got.tolist() == want, value
