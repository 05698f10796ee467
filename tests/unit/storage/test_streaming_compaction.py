"""Compaction as a streaming k-way merge (storage/compaction.py, storage/sorted_runs.py): cut
into small batches, the merge gives exactly what merging the whole inputs at once gives, for
every data model, on keys with NULLs, strings, decimals and many duplicates across rowsets,
with overlapping rowsets, DELETE versions among the inputs and the delete sign."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest

from storage import ColumnPredicate, ScanStats, StorageEngine
from storage import tablet as tablet_module
from storage.compaction import merge_rows, merge_runs
from storage.memtable import flush
from storage.schema import DELETE_SIGN, TabletSchema
from storage.sorted_runs import RunKey, merge_chunks
from tests.unit.storage.storage_testutil import column

KEYS = [column("k", "INT", key=True), column("s", "VARCHAR", 16, key=True),
        column("d", "DECIMAL", 10, 2, key=True)]


def schemas() -> dict[str, TabletSchema]:
    return {
        "dup": TabletSchema([*KEYS, column("v", "BIGINT"), column("t", "VARCHAR", 16)],
                            "DUP_KEYS"),
        "agg": TabletSchema([*KEYS, column("v", "BIGINT", agg="SUM"),
                             column("mx", "DECIMAL", 12, 3, agg="MAX"),
                             column("r", "VARCHAR", 16, agg="REPLACE"),
                             column("rn", "INT", agg="REPLACE_IF_NOT_NULL")], "AGG_KEYS"),
        "unique": TabletSchema([*KEYS, column("v", "BIGINT"), column("t", "VARCHAR", 16),
                                column(DELETE_SIGN, "TINYINT", nullable=False)],
                               "UNIQUE_KEYS"),
    }


def rows(schema: TabletSchema, n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)

    def nullable(values, t, p=0.1):
        return pa.array(values, t, mask=rng.random(n) < p)
    data = {}
    for c in schema.columns:
        t = c.type.arrow()
        if c.name == DELETE_SIGN:
            data[c.name] = pa.array((rng.random(n) < 0.2).astype(np.int8))
        elif pa.types.is_decimal(t):
            data[c.name] = nullable([Decimal(int(x)) / 100 for x in rng.integers(-50, 50, n)], t)
        elif pa.types.is_string(t):
            data[c.name] = nullable(list(np.array(["", "a", "bb", "é", "zz"])[
                rng.integers(0, 5, n)]), t)
        else:
            data[c.name] = nullable(rng.integers(0, 30 if c.is_key else 1000, n), t)
    return pa.table(data)


def batches(table: pa.Table, size: int):
    return iter([table.slice(i, size) for i in range(0, table.num_rows, size)])


@pytest.mark.parametrize("model", ["dup", "agg", "unique"])
@pytest.mark.parametrize("base", [False, True])
def test_streamed_merge_equals_whole_merge(model, base):
    schema = schemas()[model]
    inputs = [flush(rows(schema, 150, seed), schema) for seed in range(5)]
    want = merge_rows(inputs, schema, base)
    for size in (3, 64):
        got = list(merge_runs([batches(t, size) for t in inputs], schema, base))
        assert pa.concat_tables(got).equals(want), size


def test_chunks_keep_every_key_whole():
    keys = [RunKey("a")]
    runs = [pa.table({"a": [1, 1, 1, 1, 2]}), pa.table({"a": [None, 1, 1, 3]}),
            pa.table({"a": [1, 1, 1, 1, 1, 1]})]
    chunks = list(merge_chunks([batches(r, 2) for r in runs], keys))
    seen = [sorted(set(c.column("a").to_pylist()), key=lambda v: (v is not None, v))
            for c in chunks]
    flat = [v for s in seen for v in s]
    assert len(flat) == len(set(flat))  # no key in two chunks
    assert sum(c.num_rows for c in chunks) == 15


@pytest.mark.parametrize("model", ["agg", "unique", "dup"])
@pytest.mark.parametrize("whole", [False, True])
def test_tablet_compaction_in_small_batches(tmp_path, monkeypatch, model, whole):
    """A tablet's compaction read in batches of 5 rows (or whole: small inputs), with an overlapping rowset (a load of
    several flushes) and a DELETE among its inputs, reads as before and as merging at once."""
    monkeypatch.setattr(tablet_module, "COMPACTION_BATCH_ROWS", 5)
    monkeypatch.setattr(tablet_module, "COMPACTION_WHOLE_ROWS", 1 << 20 if whole else 0)
    schema = schemas()[model]
    tablet = StorageEngine(str(tmp_path)).create_tablet(1, schema)
    metas = []
    for version in range(2, 6):
        writer = tablet.open_rowset_writer(version)
        for part in range(2 if version == 3 else 1):  # version 3 overlaps
            writer.flush(rows(schema, 60, version * 10 + part))
        metas.append(tablet.publish(writer.finish(), version))
    if model == "dup":  # a DELETE among the inputs: applied to the older rowsets, purged
        metas.append(tablet.publish(tablet.write_delete([ColumnPredicate("k", "=", (3,))],
                                                        txn_id=6), 6))
    version = metas[-1].end_version
    names = schema.names
    live = [ColumnPredicate(DELETE_SIGN, "=", (0,))] if model == "unique" else []
    before = tablet.read(version, names, live, ScanStats())
    out = tablet.compact(metas, txn_id=99)
    assert tablet.replace_rowsets([m.rowset_id for m in metas], out)
    after = tablet.read(version, names, live, ScanStats())
    key = lambda r: [(v is None, str(v)) for v in r.values()]  # noqa: E731
    assert sorted(after.to_pylist(), key=key) == sorted(before.to_pylist(), key=key)
    assert not out.overlapping
