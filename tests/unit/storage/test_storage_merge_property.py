"""Property: a tablet read equals a Python model of the data models over random loads."""

import operator
import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from storage_testutil import column, schema, table_for

from storage import ColumnPredicate, ScanStats, StorageEngine


def model_schema(keys_type: str):
    aggs = {"AGG_KEYS": ("SUM", "MAX", "MIN", "REPLACE", "REPLACE_IF_NOT_NULL")}.get(
        keys_type, (None,) * 5)
    values = [column(n, "BIGINT" if n == "s" else "INT", agg=a)
              for n, a in zip(["s", "mx", "mn", "r", "rn"], aggs)]
    return schema([column("k1", "INT", key=True), column("k2", "VARCHAR", 4, key=True),
                   *values], keys_type)


AGG, UNIQUE, DUP = (model_schema(k) for k in ("AGG_KEYS", "UNIQUE_KEYS", "DUP_KEYS"))
NAMES = AGG.names
VALUE = st.one_of(st.none(), st.integers(-3, 3))
ROW = st.tuples(VALUE, st.one_of(st.none(), st.sampled_from(["", "a", "b"])),
                VALUE, VALUE, VALUE, VALUE, VALUE)
OPS = {"=": operator.eq, "!=": operator.ne, "<": operator.lt, ">=": operator.ge}


def fold(old, new, agg):
    if agg == "SUM":
        return new if old is None else old if new is None else old + new
    if agg in ("MAX", "MIN"):
        pick = max if agg == "MAX" else min
        return new if old is None else old if new is None else pick(old, new)
    if agg == "REPLACE":
        return new
    return old if new is None else new  # REPLACE_IF_NOT_NULL


def model(sch, loads):
    rows = [r for batch in loads for r in batch]
    if sch.keys_type == "DUP_KEYS":
        return rows
    merged = {}
    for r in rows:
        key = r[:2]
        if key not in merged:
            merged[key] = list(r)
            continue
        for i, name in enumerate(NAMES[2:], start=2):
            merged[key][i] = fold(merged[key][i], r[i], sch.aggregation_of(name))
    return [tuple(v) for v in merged.values()]


def sort_key(row):
    return tuple((v is not None, v if v is not None else 0) for v in row)


@st.composite
def predicate(draw):
    name = draw(st.sampled_from(["k1", "k1", "k2", "s", "mx", "r", "rn"]))
    op = draw(st.sampled_from([*OPS, "is_null"]))
    if op == "is_null":
        return ColumnPredicate(name, op)
    value = draw(st.sampled_from(["", "a", "b"]) if name == "k2" else st.integers(-3, 6))
    return ColumnPredicate(name, op, (value,))


def holds(pred, row):
    value = row[NAMES.index(pred.column)]
    if pred.op == "is_null":
        return value is None
    return value is not None and OPS[pred.op](value, pred.values[0])


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([AGG, UNIQUE, DUP]), st.lists(st.lists(ROW, max_size=12), max_size=4),
       st.lists(predicate(), max_size=2))
def test_tablet_read_matches_the_model(sch, loads, preds):
    with tempfile.TemporaryDirectory() as tmp:
        tablet = StorageEngine(tmp, page_size=64, short_key_interval=2).create_tablet(1, sch)
        for version, batch in enumerate(loads, start=2):
            data = table_for(sch, {n: [r[i] for r in batch] for i, n in enumerate(NAMES)})
            tablet.publish(tablet.write_rowset(data, version), version)
        stats = ScanStats()
        got = tablet.read(10**6, NAMES, preds, stats)
    expected = [r for r in model(sch, loads) if all(holds(p, r) for p in preds)]
    got_rows = [tuple(d[n] for n in NAMES) for d in got.to_pylist()]
    assert sorted(got_rows, key=sort_key) == sorted(expected, key=sort_key)
    if sch.keys_type != "DUP_KEYS" or len([b for b in loads if b]) <= 1:
        assert got_rows == sorted(got_rows, key=lambda r: sort_key(r[:2]))  # key order
    assert stats.rows_returned == len(expected)
