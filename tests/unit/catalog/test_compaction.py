"""Cumulative compaction on an in-process catalog: runs of rowsets merge into one rowset with
their version range, reads do not change (DUPLICATE and UNIQUE models, a DELETE in between),
and a restart (journal replay + restore) sees the compacted state."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from catalog.catalog import Catalog
from catalog.compaction import compact_all
from catalog.load import load_table
from server.parser.create_table import parse_create_table
from server.parser.tokens import TokenCursor
from storage import ColumnPredicate, ScanStats, StorageEngine
from storage.compaction_policy import CompactionConfig

NOW = CompactionConfig(min_deltas=5, skip_window_seconds=0)
DDL = ("CREATE TABLE t (k INT NOT NULL, v INT) {model} KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 "
       'PROPERTIES ("replication_num" = "1")')


def open_catalog(path: Path) -> Catalog:
    cat = Catalog(path / "meta", StorageEngine(str(path / "storage")), backend_num=1)
    cat.open()
    return cat


def load(cat: Catalog, keys: list[int], values: list[int]) -> None:
    load_table(cat, "db", "t", pa.table({"k": pa.array(keys, pa.int32()),
                                         "v": pa.array(values, pa.int32())}), datetime.now())


def rows(cat: Catalog, predicates=()) -> list[tuple]:
    table = cat.get_table("db", "t")
    out = []
    for p in table.partitions.values():
        for tid in p.tablets:
            t = cat.engine.get_tablet(tid).read(p.visible_version, ["k", "v"], list(predicates),
                                                ScanStats())
            out += list(zip(t.column("k").to_pylist(), t.column("v").to_pylist()))
    return sorted(out)


def rowset_counts(cat: Catalog) -> list[int]:
    table = cat.get_table("db", "t")
    return [len(cat.engine.get_tablet(tid).rowsets()) for p in table.partitions.values()
            for tid in p.tablets]


@pytest.mark.parametrize("model", ["DUPLICATE", "UNIQUE"])
def test_compaction_keeps_rows_and_survives_restart(tmp_path, model):
    cat = open_catalog(tmp_path)
    cat.create_database("db")
    cat.create_table("db", parse_create_table(TokenCursor(DDL.format(model=model))))
    for i in range(6):
        load(cat, [1, 2, 3, 10 + i], [i, i, i, i])
    before = rows(cat)
    assert max(rowset_counts(cat)) >= 5
    assert compact_all(cat, NOW) >= 1
    assert rows(cat) == before
    assert rows(cat, [ColumnPredicate("k", "<=", (2,))]) == [r for r in before if r[0] <= 2]
    compacted = [r for tid in cat.get_table("db", "t").partitions[
        next(iter(cat.get_table("db", "t").partitions))].tablets
        for r in cat.engine.get_tablet(tid).rowsets() if r.start_version != r.end_version]
    assert compacted and all(r.start_version < r.end_version for r in compacted)
    load(cat, [1], [99])  # a later load still wins / adds on top of the compacted rowset
    after = rows(cat)
    cat.close()
    cat2 = open_catalog(tmp_path)  # replay: the same rowsets, the inputs' files gone
    assert rows(cat2) == after
    assert rowset_counts(cat2) == rowset_counts(cat)
    if model == "UNIQUE":
        assert (1, 99) in after and (1, 5) not in after
    cat2.close()


def test_delete_after_the_run_still_applies(tmp_path):
    from catalog.delete import delete_rows
    from server.parser.storage import parse_delete
    cat = open_catalog(tmp_path)
    cat.create_database("db")
    cat.create_table("db", parse_create_table(TokenCursor(DDL.format(model="DUPLICATE"))))
    for i in range(5):
        load(cat, [1, 2], [i, i])
    delete_rows(cat, "db", parse_delete(TokenCursor("DELETE FROM t WHERE k = 1")))
    for i in range(5):
        load(cat, [1, 2], [i, i])
    expected = rows(cat)
    assert compact_all(cat, NOW) >= 1
    assert rows(cat) == expected
    assert pc.sum(pa.array([k == 1 for k, _ in expected])).as_py() == 5
    cat.close()
