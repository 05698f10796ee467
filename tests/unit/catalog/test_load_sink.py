"""OlapTableSink: a load written batch by batch through per-tablet memtables.

Memtables flush at write_buffer_size and past the loads' memtable soft limit; a tablet flushed
several times gets one overlapping rowset whose segments readers merge (AGGREGATE / UNIQUE:
keys repeated across batches fold as one load's rows would); nothing is visible before the
commit, one version per partition after it, and an aborted sink leaves no file behind. A
restart (journal replay) reads the overlapping rowsets the same way.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from catalog.catalog import Catalog
from catalog.load import commit_load
from catalog.load_sink import OlapTableSink
from server.parser.create_table import parse_create_table
from server.parser.tokens import TokenCursor
from storage import ScanStats, StorageEngine
from storage.memtable import MemTableLimiter
from storage.scan_unit import eligible, read_unit

DDL = ("CREATE TABLE t (k INT NOT NULL, v {vtype}) {model} KEY(k) DISTRIBUTED BY HASH(k) "
       'BUCKETS 3 PROPERTIES ("replication_num" = "1")')


def open_catalog(path: Path, write_buffer_size: int = 1024, soft_limit: int = 0) -> Catalog:
    engine = StorageEngine(str(path / "storage"))
    engine.write_buffer_size = write_buffer_size
    engine.memtables = MemTableLimiter(soft_limit)
    cat = Catalog(path / "meta", engine, backend_num=1)
    cat.open()
    return cat


def make_table(cat: Catalog, model: str, vtype: str = "INT") -> None:
    cat.create_database("db")
    cat.create_table("db", parse_create_table(TokenCursor(DDL.format(model=model, vtype=vtype))))


def batch(keys, values) -> pa.Table:
    return pa.table({"k": pa.array(keys, pa.int32()), "v": pa.array(values, pa.int32())})


def rows(cat: Catalog) -> list[tuple]:
    table = cat.get_table("db", "t")
    out = []
    for p in table.partitions.values():
        for tid in p.tablets:
            t = cat.engine.get_tablet(tid).read(p.visible_version, ["k", "v"], [], ScanStats())
            out += list(zip(t.column("k").to_pylist(), t.column("v").to_pylist()))
    return sorted(out)


def rowsets(cat: Catalog) -> list:
    table = cat.get_table("db", "t")
    return [r for p in table.partitions.values() for tid in p.tablets
            for r in cat.engine.get_tablet(tid).rowsets()]


def load_in_batches(cat: Catalog, batches: list[pa.Table]) -> None:
    sink = OlapTableSink(cat, "db", "t", datetime.now(), label="big")
    for b in batches:
        sink.write(b)
    assert rows(cat) == []  # written, not visible
    commit_load(cat, sink.finish())


@pytest.mark.parametrize("model,vtype,fold", [
    ("AGGREGATE", "INT SUM", lambda vs: sum(vs)),
    ("UNIQUE", "INT", lambda vs: vs[-1]),
    ("DUPLICATE", "INT", None),
])
def test_flushed_batches_read_as_one_load(tmp_path, model, vtype, fold):
    cat = open_catalog(tmp_path)
    make_table(cat, model, vtype)
    keys = np.arange(3000) % 1000  # every key three times, in three batches
    values = np.arange(3000)
    load_in_batches(cat, [batch(keys[i:i + 1000], values[i:i + 1000]) for i in range(0, 3000, 1000)])
    loaded = rowsets(cat)
    assert len(loaded) == 3 and {(r.start_version, r.end_version) for r in loaded} == {(2, 2)}
    assert all(r.overlapping and len(r.segments) == 3 for r in loaded)  # one flush per batch
    if fold is None:
        expected = sorted(zip(keys.tolist(), values.tolist()))
    else:
        expected = [(k, fold([int(v) for v in values[keys == k]])) for k in range(1000)]
    assert rows(cat) == expected
    # scan units concatenate segments: an overlapping rowset of a model that merges on read
    # is no unit's; where one is (Duplicate, merge-on-write Unique), the unit reads the rows
    # the tablets read
    snaps = [cat.engine.get_tablet(tid).capture(p.visible_version)
             for p in cat.get_table("db", "t").partitions.values() for tid in p.tablets]
    units = [s for s in snaps if eligible(s, any_size=True)]
    assert len(units) == (0 if model == "AGGREGATE" else len(snaps))
    if units:
        table, _ = read_unit(units, ["k", "v"], [], ScanStats())
        assert sorted(zip(table.column("k").to_pylist(), table.column("v").to_pylist())) == \
            expected
    cat.close()
    again = open_catalog(tmp_path)  # journal replay keeps the rowsets overlapping
    assert rows(again) == expected
    assert all(r.overlapping for r in rowsets(again))
    again.close()


def test_memory_pressure_flushes_the_memtables(tmp_path):
    cat = open_catalog(tmp_path, write_buffer_size=1 << 30, soft_limit=20_000)
    make_table(cat, "DUPLICATE")
    sink = OlapTableSink(cat, "db", "t", datetime.now())
    sink.write(batch(list(range(6000)), list(range(6000))))  # ~48 kB over three tablets
    assert cat.engine.memtables.held == 0  # all of the load's memtables flushed
    commit_load(cat, sink.finish())
    assert cat.engine.memtables.held == 0
    assert rows(cat) == [(i, i) for i in range(6000)]


def test_small_load_still_writes_one_load_file(tmp_path):
    cat = open_catalog(tmp_path, write_buffer_size=1 << 30)
    make_table(cat, "DUPLICATE")
    load_in_batches(cat, [batch([1, 2], [10, 20]), batch([3], [30])])
    assert rows(cat) == [(1, 10), (2, 20), (3, 30)]
    assert all(r.load_file is not None for r in rowsets(cat))


def test_abort_removes_every_file(tmp_path):
    cat = open_catalog(tmp_path)
    make_table(cat, "DUPLICATE")
    data = tmp_path / "storage" / "data"
    sink = OlapTableSink(cat, "db", "t", datetime.now())
    sink.write(batch(list(range(5000)), list(range(5000))))
    assert list(data.rglob("*.dat"))  # flushed segments of the pending rowsets
    sink.abort()
    assert not list(data.rglob("*.dat"))
    assert cat.engine.memtables.held == 0
    assert rows(cat) == []
