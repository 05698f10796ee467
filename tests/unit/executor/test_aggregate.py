"""The aggregation paths (numpy over packed key codes, Acero over codes, Acero over the keys as
they are, int64 DECIMALs, tablet-by-tablet partials) give what one Acero pass over the original
columns gives: the same groups, values, types and NULLs. The order of the groups is their first
appearance; Acero's is nearly that (its hash table may number a batch's new keys in another
order), so the comparison with it ignores the order."""

from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest

from executor.expressions import decimal_int64
from executor.operators import aggregate, aggregate_numpy
from executor.operators.aggregate import AggInput, run_aggregate
from executor.operators.aggregate_scan import as_states, split_calls
from planner import logical as L


def reference(table: pa.Table, keys: list[str], calls: list) -> pa.Table:
    """One Acero pass over the original columns, widened as Doris widens (the one-pass path
    before int64 DECIMALs and key codes)."""
    specs, names = [], []
    for c in calls:
        if c.func == "count_all":
            specs.append(([], "count_all"))
            names.append("count_all")
            continue
        col = table.column(c.arg)
        t = col.type
        if c.func == "sum" and (pa.types.is_integer(t) or pa.types.is_boolean(t)):
            col = col.cast(pa.int64())
        elif c.func == "sum" and pa.types.is_decimal(t):
            col = col.cast(pa.decimal128(38, t.scale))
        elif c.func in ("sum", "mean") and (pa.types.is_floating(t) or pa.types.is_integer(t)):
            col = col.cast(pa.float64())
        elif c.func == "mean" and pa.types.is_decimal(t):
            col = col.cast(pa.decimal128(38, max(t.scale, 4)))
        name = f"in{len(specs)}"
        table = table.append_column(name, col)
        opts = aggregate.pc.CountOptions(mode="only_valid") if c.func == "count" else None
        specs.append((name, c.func, opts) if opts else (name, c.func))
        names.append(f"{name}_{c.func}")
    result = table.group_by(keys, use_threads=False).aggregate(specs)
    return pa.table({**{k: result.column(k) for k in keys},
                     **{c.output: result.column(n) for c, n in zip(calls, names)}})


def multiset(t: pa.Table) -> list:
    return sorted(t.to_pylist(), key=repr)


def _decimals(rng, n, digits, p, s, nulls=0.1):
    def unscaled():
        return sum(int(rng.integers(-10 ** 9, 10 ** 9)) * 10 ** (9 * i) for i in range(digits // 9 + 1)) \
            % (2 * 10 ** digits) - 10 ** digits
    vals = [None if rng.random() < nulls else Decimal(unscaled()).scaleb(-s) for _ in range(n)]
    return pa.array(vals, pa.decimal128(p, s))


def _table(rng, n):
    def nullable(arr, frac=0.05):
        mask = rng.random(n) < frac
        return pa.array(arr, mask=mask)
    return pa.table({
        "flag": pa.array(rng.choice(["A", "N", "R"], n)),
        "status": nullable(rng.choice(["F", "O"], n)),
        "mode": pa.array(rng.choice(["MAIL", "SHIP", "TRUCK", "AIR"], n)),      # variable width
        "code4": pa.array(rng.choice(["ab12", "zz99", "q0q0"], n)),              # fixed, 4 bytes
        "code6": nullable(rng.choice(["abcdef", "uvwxyz"], n)),                 # padded to 8
        "k": nullable(rng.integers(-5, 40, n).astype(np.int32)),
        "big": pa.array(rng.integers(-2**40, 2**40, n)),
        "d": pa.array(rng.integers(0, 400, n).astype(np.int32)).cast(pa.date32()),
        "price": _decimals(rng, n, 9, 15, 2),
        "wide": _decimals(rng, n, 30, 38, 4),
        "dk": _decimals(rng, n, 2, 5, 1, nulls=0.02),
        "i": nullable(rng.integers(-1000, 1000, n).astype(np.int16)),
        "f": nullable(rng.normal(size=n) * 1e3),
        "b": nullable(rng.random(n) < 0.5),
    })


_KEYS = [["flag", "status"], ["k"], ["mode"], ["code4", "code6"], ["d", "flag"], ["dk"],
         ["big"], ["flag", "mode", "k"], []]


def _calls(args):
    calls = [L.AggCall("count_all", None, "n")]
    for a in args:
        for func in ("count", "sum", "mean", "min", "max"):
            calls.append(L.AggCall(func, a, f"{func}_{a}"))
    return calls


@pytest.mark.parametrize("keys", _KEYS)
@pytest.mark.parametrize("rows", [0, 1, 37, 3000])
def test_matches_one_acero_pass(keys, rows):
    rng = np.random.default_rng(rows + len(keys))
    table = _table(rng, rows)
    calls = _calls(["price", "wide", "i", "f", "big"])
    calls += [L.AggCall(f, "d", f"{f}_d") for f in ("count", "min", "max")]
    calls += [L.AggCall("sum", "b", "sum_b"), L.AggCall("mean", "b", "mean_b")]
    expected = reference(table, keys, calls)
    got = run_aggregate(table, keys, calls)
    assert got.schema == expected.schema
    assert multiset(got) == multiset(expected)


@pytest.mark.parametrize("keys", [["flag", "status"], ["k"], ["big"]])
def test_int64_decimal_arguments(keys):
    """Arguments still held as int64 (what project_for_aggregate gives) aggregate as their
    decimal128 arrays do, including the split sums whose total passes int64."""
    rng = np.random.default_rng(7)
    table = _table(rng, 5000)
    big = pa.array([Decimal(2**61 + int(x)).scaleb(-2) for x in rng.integers(0, 1000, 5000)],
                   pa.decimal128(38, 2))
    table = table.append_column("huge", big)
    calls = _calls(["price", "huge"])
    expected = reference(table, keys, calls)
    columns = {n: table.column(n) for n in table.column_names}
    for name in ("price", "huge"):
        columns[name] = decimal_int64.operand(table.column(name).combine_chunks())
    got = run_aggregate(AggInput(columns, table.num_rows), keys, calls)
    assert multiset(got) == multiset(expected)


def _aggregated_by_runs(monkeypatch, table: pa.Table, calls: list) -> pa.Table:
    """run_aggregate over `key`, asserting that it grouped by runs."""
    seen = []
    real = aggregate_numpy._Runs.__init__

    def init(self, code):
        seen.append(len(code))
        real(self, code)
    monkeypatch.setattr(aggregate_numpy._Runs, "__init__", init)
    got = run_aggregate(table, ["key"], calls)
    assert seen == [table.num_rows]
    return got


def test_sorted_keys_take_the_runs_path(monkeypatch):
    rng = np.random.default_rng(3)
    n = 4000
    table = pa.table({"key": np.sort(rng.integers(0, 10**12, n)),
                      "price": _decimals(rng, n, 9, 15, 2), "i": rng.integers(0, 9, n)})
    calls = _calls(["price", "i"])
    got = _aggregated_by_runs(monkeypatch, table, calls)
    assert multiset(got) == multiset(reference(table, ["key"], calls))


@pytest.mark.parametrize("key_range", [10, 10**12])
def test_sorted_keys_of_any_range_take_the_runs_path(monkeypatch, key_range):
    """A sorted key of few values (an Aggregate tablet's merged rows grouped by its leading key)
    takes the runs too, float sums included: added in row order, as Acero adds them."""
    rng = np.random.default_rng(5)
    n = 20_000
    f = rng.normal(size=n) * 10.0 ** rng.integers(-8, 8, n)
    table = pa.table({"key": np.sort(rng.integers(0, key_range, n)), "i": rng.integers(0, 9, n),
                      "f": pa.array(f, mask=rng.random(n) < 0.1)})
    calls = [c for c in _calls(["i", "f"]) if c.func not in ("min", "max")]
    got = _aggregated_by_runs(monkeypatch, table, calls)
    expected = reference(table, ["key"], calls)
    assert got.schema == expected.schema
    assert multiset(got) == multiset(expected)  # float sums equal to the last bit
    assert got.column("key").to_pylist() == sorted(set(table.column("key").to_pylist()))


@pytest.mark.parametrize("key_type", [pa.int8(), pa.uint32(), pa.date32(), pa.timestamp("us")])
def test_sorted_lone_key_runs_on_its_values(monkeypatch, key_type):
    """A lone sorted key is grouped by runs on its own values (no key code), any integer-like
    type, the keys given back in that type."""
    rng = np.random.default_rng(8)
    n = 3000
    raw = np.sort(rng.integers(0, 100, n))
    key = pa.array(raw, pa.int64()).cast(key_type) if not pa.types.is_date32(key_type) else \
        pa.array(raw.astype(np.int32), pa.int32()).view(key_type)
    table = pa.table({"key": key, "i": rng.integers(0, 9, n)})
    calls = _calls(["i"])
    monkeypatch.setattr(aggregate, "KeyCodes", None)  # not needed: never called
    got = _aggregated_by_runs(monkeypatch, table, calls)
    expected = reference(table, ["key"], calls)
    assert got.schema == expected.schema
    assert got.to_pylist() == sorted(expected.to_pylist(), key=lambda r: r["key"])


def test_sorted_lone_key_with_calls_numpy_does_not_cover():
    """MIN/MAX of floats over a lone sorted key: the runs path declines and Acero answers."""
    rng = np.random.default_rng(9)
    n = 3000
    table = pa.table({"key": np.sort(rng.integers(0, 50, n)), "f": rng.normal(size=n)})
    calls = [L.AggCall(f, "f", f"{f}_f") for f in ("min", "max", "sum")]
    got = run_aggregate(table, ["key"], calls)
    assert multiset(got) == multiset(reference(table, ["key"], calls))


def test_unsorted_small_keys_stay_direct():
    rng = np.random.default_rng(6)
    code = rng.integers(0, 10, 5000)
    code[:2000] = np.sort(code[:2000])  # a sorted prefix: the full check must still refuse
    assert isinstance(aggregate_numpy.groups_of(code, 10), aggregate_numpy._Direct)
    assert isinstance(aggregate_numpy.groups_of(np.sort(code), 10), aggregate_numpy._Runs)


@pytest.mark.parametrize("keys", [["flag", "status"], ["k"], []])
def test_partials_merge_to_the_one_pass_result(keys):
    """Tablet-by-tablet partial states merged (aggregate_scan.split_calls) equal one pass."""
    rng = np.random.default_rng(11)
    table = _table(rng, 4000)
    calls = [c for c in _calls(["price", "i"]) if not (c.func == "mean" and c.arg != "price")]
    calls += [L.AggCall(f, "d", f"{f}_d") for f in ("count", "min", "max")]
    node = L.Aggregate(None, keys, calls)
    unit_calls, finish = split_calls(node, {n: table.schema.field(n).type for n in table.column_names})
    # Tablets aggregated, and tablets passing their rows on as states (little reduction).
    parts = [run_aggregate(table.slice(i, 700), keys, unit_calls) if i % 1400 else
             as_states(AggInput.of(table.slice(i, 700)), keys, unit_calls)
             for i in range(0, 4000, 700)]
    got = finish(pa.concat_tables(parts))
    expected = reference(table, keys, calls)
    assert got.schema == expected.schema
    assert multiset(got) == multiset(expected)
    assert got.to_pylist() == run_aggregate(table, keys, calls).to_pylist()  # the same order
