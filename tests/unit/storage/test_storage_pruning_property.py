"""Property: for random data and predicates, the pruned read equals a filtered full scan.

The reference is plain Python over the rows (SQL semantics: NULL never satisfies a comparison),
independent of storage's predicate code. Tiny pages and short key intervals make every index
path (several pages, several index entries, cut string keys, NULL keys) run on small data.
"""

import datetime as dt
import operator
import tempfile
from decimal import Decimal

import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from storage_testutil import column, read_all, schema, write_and_open

from storage import ColumnPredicate

SCHEMA = schema([
    column("k1", "LARGEINT", key=True), column("k2", "LARGEINT", key=True),
    column("k3", "VARCHAR", 10, key=True),           # short key widths: 16 + 16 + 4 (cut)
    column("v", "INT"), column("d", "DATE"), column("dec", "DECIMAL", 9, 2),
    column("s", "VARCHAR", 10),
])
assert SCHEMA.short_key_widths == [16, 16, 4]

small_int = st.integers(-3, 3)
DOMAINS = {
    "k1": small_int, "k2": small_int, "v": st.integers(-5, 5),
    "k3": st.text(alphabet="ab\x00é", max_size=6),
    "d": st.dates(dt.date(2020, 1, 1), dt.date(2020, 1, 9)),
    "dec": st.decimals(Decimal("-2.00"), Decimal("2.00"), places=2),
    "s": st.text(alphabet="xyz", max_size=3),
}
NAMES = list(DOMAINS)
PREDICATE_COLUMNS = ["k1", "k1", "k1", "k2", "k2", "k3", "k3", *NAMES[3:]]  # favour keys
OPS = ["=", "!=", "<", "<=", ">", ">=", "in", "is_null", "is_not_null"]
PY_OPS = {"=": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
          ">": operator.gt, ">=": operator.ge}

rows_strategy = st.lists(
    st.fixed_dictionaries({n: st.one_of(st.none(), DOMAINS[n]) for n in SCHEMA.names}),
    min_size=1, max_size=150)


@st.composite
def predicates(draw):
    name = draw(st.sampled_from(PREDICATE_COLUMNS))
    op = draw(st.sampled_from(OPS))
    value = st.one_of(DOMAINS[name], DOMAINS[name], DOMAINS[name], st.none())
    if op in ("is_null", "is_not_null"):
        return ColumnPredicate(name, op)
    if op == "in":
        return ColumnPredicate(name, op, tuple(draw(st.lists(value, max_size=4))))
    return ColumnPredicate(name, op, (draw(value),))


def holds(pred: ColumnPredicate, value) -> bool:
    if pred.op == "is_null":
        return value is None
    if pred.op == "is_not_null":
        return value is not None
    if value is None:
        return False
    if pred.op == "in":
        return any(v is not None and value == v for v in pred.values)
    other = pred.values[0]
    return other is not None and PY_OPS[pred.op](value, other)


def sorted_table(rows: list[dict]) -> pa.Table:
    table = pa.table({c.name: pa.array([r[c.name] for r in rows], type=c.type.arrow())
                      for c in SCHEMA.columns})
    keys = [(k, "ascending", "at_start") for k in SCHEMA.key_names]
    return table.take(pc.sort_indices(table, keys))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows_strategy, st.lists(predicates(), max_size=3), st.sampled_from([1, 3, 16]),
       st.sampled_from([24, 64, 4096]), st.lists(st.sampled_from(NAMES), max_size=3))
def test_pruned_read_equals_filtered_full_scan(rows, preds, interval, page_size, projection):
    table = sorted_table(rows)
    columns = projection or SCHEMA.names
    with tempfile.TemporaryDirectory() as tmp:
        reader = write_and_open(tmp, SCHEMA, table, page_size=page_size, interval=interval)
        got, stats = read_all(reader, preds, columns=columns)
    expected = [{c: r[c] for c in columns} for r in table.to_pylist()
                if all(holds(p, r[p.column]) for p in preds)]
    got_rows = zip(*(got.column(i).to_pylist() for i in range(len(columns))))
    assert [dict(zip(columns, values)) for values in got_rows] == expected
    assert got.num_rows == len(expected)
    assert stats.rows_total == (stats.rows_short_key_filtered + stats.rows_zone_map_filtered
                                + stats.rows_read)
    assert stats.rows_read == stats.rows_conditions_filtered + stats.rows_returned
