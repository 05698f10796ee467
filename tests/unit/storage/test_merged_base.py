"""Merge-on-read from a kept merge of older versions (storage/merged_base.py): every read equals
the merge of all its rowsets, whatever the kept table, compactions, DELETEs and schemas."""

import random

import pyarrow as pa
import pytest
from storage_testutil import column, schema, table_for

from storage import ColumnPredicate as P
from storage import ScanStats, StorageEngine

AGG = schema([column("g", "INT", key=True, nullable=False), column("k", "INT", key=True, nullable=False),
              column("v", "BIGINT", agg="SUM"), column("m", "INT", agg="MAX")], "AGG_KEYS")
UNIQUE = schema([column("k", "INT", key=True, nullable=False), column("v", "VARCHAR", 10),
                 column("n", "BIGINT")], "UNIQUE_KEYS")


@pytest.fixture
def engines(tmp_path):
    """(cached, plain): the same loads go to a tablet of each; only the first keeps merges."""
    return (StorageEngine(str(tmp_path / "cached"), page_cache_bytes=64 << 20),
            StorageEngine(str(tmp_path / "plain")))


def _load(tablets, rows, version):
    for t in tablets:
        data = table_for(t.schema, {c.name: [r[i] for r in rows]
                                    for i, c in enumerate(t.schema.columns)})
        t.publish(t.write_rowset(data, txn_id=version), version)


def _read(tablet, version, columns=None, preds=()):
    stats = ScanStats()
    rows = tablet.read(version, columns or tablet.schema.names, list(preds), stats)
    return rows.to_pylist(), stats


def _same(tablets, version, columns=None, preds=()):
    (got, stats), (want, _) = (_read(t, version, columns, preds) for t in tablets)
    assert got == want
    return stats


def _random_rows(rng, n):
    return [(rng.randrange(3), rng.randrange(40), rng.randrange(100), rng.randrange(1000))
            for _ in range(n)]


def _loaded(engines, seed: int, last: int, rows: int):
    """An AGG tablet per engine with versions 2..last of `rows` random rows each."""
    tablets = [e.create_tablet(1, AGG) for e in engines]
    rng = random.Random(seed)
    for v in range(2, last + 1):
        _load(tablets, _random_rows(rng, rows), v)
    return tablets, rng


def test_a_read_merges_only_the_rowsets_after_the_kept_version(engines):
    tablets, rng = _loaded(engines, 1, 5, 30)
    first = _same(tablets, 5)
    assert first.merged_base_rows == 0 and first.rowsets_read == 4
    _load(tablets, _random_rows(rng, 30), 6)
    second = _same(tablets, 6)
    assert second.merged_base_rows > 0  # versions 2-5 came from the kept merge
    assert second.segments_total == 1  # only version 6 was read
    _same(tablets, 5)  # an older snapshot still reads its own versions
    _same(tablets, 6, ["g", "k", "m"])  # other columns: a merge of their own


def test_compaction_spanning_the_kept_version_is_merged_from_scratch(engines):
    tablets, rng = _loaded(engines, 2, 5, 20)
    _same(tablets, 5)  # keeps versions up to 5
    for v in range(6, 8):
        _load(tablets, _random_rows(rng, 20), v)
    for t in tablets:  # versions 4-7 in one rowset: spans the kept version 5
        inputs = [r for r in t.rowsets() if r.start_version >= 4]
        out = t.compact(inputs, txn_id=100)
        assert t.replace_rowsets([r.rowset_id for r in inputs], out)
    stats = _same(tablets, 7)
    assert stats.merged_base_rows == 0
    _load(tablets, _random_rows(rng, 20), 8)
    assert _same(tablets, 8).merged_base_rows > 0  # kept again, from the read at 7
    for t in tablets:  # a compaction below the kept version leaves it usable
        inputs = [r for r in t.rowsets() if r.end_version <= 7]
        out = t.compact(inputs, txn_id=101)
        assert t.replace_rowsets([r.rowset_id for r in inputs], out)
    _load(tablets, _random_rows(rng, 20), 9)
    assert _same(tablets, 9).merged_base_rows > 0


def test_a_later_delete_is_not_applied_to_kept_rows_it_missed(engines):
    tablets, rng = _loaded(engines, 3, 4, 20)
    _same(tablets, 4)
    for t in tablets:
        t.publish(t.write_delete([P("g", "=", (1,))], 5), 5)
    stats = _same(tablets, 5)
    assert stats.merged_base_rows == 0
    _load(tablets, _random_rows(rng, 20), 6)
    _same(tablets, 6)


def test_key_predicates_keep_their_own_merge(engines):
    tablets, rng = _loaded(engines, 4, 4, 30)
    _same(tablets, 4, preds=[P("g", "=", (1,))])
    _same(tablets, 4, preds=[P("g", "=", (2,))])
    _load(tablets, _random_rows(rng, 30), 5)
    _same(tablets, 5, preds=[P("g", "=", (1,))])
    _same(tablets, 5, preds=[P("g", "=", (2,))])
    _same(tablets, 5, preds=[P("v", ">", (50,))])  # a value predicate: after the merge


def test_unique_replace_keeps_the_last_version(engines):
    tablets = [e.create_tablet(1, UNIQUE) for e in engines]
    _load(tablets, [(1, "a", 1), (2, "b", 2)], 2)
    _load(tablets, [(1, "c", None), (3, "d", 3)], 3)
    _same(tablets, 3)
    _load(tablets, [(1, None, 5), (2, "e", 6)], 4)
    stats = _same(tablets, 4)
    assert stats.merged_base_rows > 0
    assert _read(tablets[0], 4)[0][0] == {"k": 1, "v": None, "n": 5}


def test_a_schema_change_is_not_served_from_a_merge_under_the_old_schema(engines):
    tablets, _ = _loaded(engines, 5, 3, 20)
    _same(tablets, 3)
    for t in tablets:
        t.set_schema(schema([*t.schema.columns], "AGG_KEYS"))  # a new schema object
    stats = _same(tablets, 3)
    assert stats.merged_base_rows == 0


@pytest.mark.parametrize("seed", range(8))
def test_random_loads_compactions_and_reads_agree(engines, seed):
    tablets = [e.create_tablet(1, AGG) for e in engines]
    rng = random.Random(seed)
    version = 1
    for _ in range(60):
        op = rng.random()
        if op < 0.5:
            version += 1
            _load(tablets, _random_rows(rng, rng.randrange(1, 15)), version)
        elif op < 0.65 and len(tablets[0].rowsets()) > 2:
            published = tablets[0].rowsets()
            i = rng.randrange(len(published) - 1)
            j = rng.randrange(i + 1, len(published))
            if i and any(r.is_delete for r in published[i:j + 1]):
                continue  # only a base compaction merges a DELETE (it applies to older rows)
            for t in tablets:
                inputs = t.rowsets()[i:j + 1]
                out = t.compact(inputs, txn_id=1000 + version)
                assert t.replace_rowsets([r.rowset_id for r in inputs], out)
        elif op < 0.7 and version > 2:
            version, below = version + 1, rng.randrange(40)
            for t in tablets:
                t.publish(t.write_delete([P("k", "<", (below,))], version), version)
        elif version > 1:
            _same(tablets, version)
    _same(tablets, version)


def test_a_snapshot_older_than_the_newest_kept_merge_uses_an_older_one(engines):
    from storage.merged_base import KEPT_VERSIONS

    tablets, rng = _loaded(engines, 8, 5, 25)
    _same(tablets, 5)
    last = 5 + KEPT_VERSIONS
    for v in range(6, last + 1):
        _load(tablets, _random_rows(rng, 25), v)
        _same(tablets, v)  # keeps v, the earlier ones behind it
    stats = _same(tablets, last - 2)  # a reader whose snapshot is two versions behind
    assert stats.merged_base_rows > 0 and stats.segments_total == 0  # the merge kept there
    stats = _same(tablets, 5)  # older than the oldest merge kept (6)
    assert stats.merged_base_rows == 0
