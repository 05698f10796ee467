"""Property: with bloom filters, bitmap indexes and DELETE versions in play, a pruned tablet read
equals the rows a plain Python filter keeps.

Random rows in two loads with a random DELETE between them (it must remove matching rows of the
first load only), random predicates; every column has a bloom filter or a bitmap index or both.
"""

import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from storage_testutil import table_for
from test_storage_pruning_property import DOMAINS, NAMES, SCHEMA, holds, predicates

from storage import ScanStats, StorageEngine, TabletSchema

INDEXED = TabletSchema(SCHEMA.columns, "DUP_KEYS",
                       bloom_filter_columns=("k2", "k3", "d", "dec", "s"),
                       bitmap_indexes={"k1": 1, "k3": 2, "v": 3, "d": 4, "dec": 5, "s": 6})

rows_strategy = st.lists(
    st.fixed_dictionaries({n: st.one_of(st.none(), DOMAINS[n]) for n in NAMES}),
    min_size=1, max_size=80)


def _table(rows):
    return table_for(INDEXED, {n: [r[n] for r in rows] for n in NAMES})


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows_strategy, rows_strategy, st.lists(predicates(), min_size=1, max_size=2),
       st.lists(predicates(), max_size=3), st.sampled_from([24, 64, 4096]))
def test_indexed_read_with_deletes_equals_python_filter(first, second, delete, preds, page_size):
    with tempfile.TemporaryDirectory() as tmp:
        tablet = StorageEngine(tmp, page_size=page_size, short_key_interval=3) \
            .create_tablet(1, INDEXED)
        tablet.publish(tablet.write_rowset(_table(first), 1), 2)
        tablet.publish(tablet.write_delete(delete, 2), 3)
        tablet.publish(tablet.write_rowset(_table(second), 3), 4)
        stats = ScanStats()
        got = tablet.read(4, NAMES, preds, stats)
    survivors = [r for r in first if not all(holds(p, r[p.column]) for p in delete)] + second
    want = [r for r in survivors if all(holds(p, r[p.column]) for p in preds)]
    key = lambda r: tuple((r[n] is not None, str(r[n])) for n in NAMES)  # noqa: E731
    assert sorted(got.to_pylist(), key=key) == sorted(want, key=key)
    assert stats.rows_total == (stats.rows_short_key_filtered + stats.rows_zone_map_filtered
                                + stats.rows_bloom_filter_filtered
                                + stats.rows_bitmap_index_filtered + stats.rows_read)
    assert stats.rows_read == (stats.rows_conditions_filtered + stats.rows_del_filtered
                               + stats.rows_returned)
