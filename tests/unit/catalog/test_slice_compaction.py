"""Slice compaction (catalog/slice_compaction.py, storage/slice_compaction.py): many tablets'
small load slices merged in one pass give exactly the rows the per-tablet compaction gives
(Duplicate and Aggregate models: SUM, MAX, REPLACE, REPLACE_IF_NOT_NULL, NULLs, equal keys in
several loads), in one journal entry that a restart replays; a tablet whose inputs changed is
left out; larger inputs and Unique tablets keep the per-tablet path."""

from __future__ import annotations

import random
from datetime import datetime
from pathlib import Path

import pyarrow as pa
import pytest

from catalog.catalog import Catalog
from catalog.compaction import CUMULATIVE, compact_all, compact_tablet, tablet_refs
from catalog.load import load_table
from catalog.slice_compaction import run_slice_compaction, slice_tasks
from server.parser.create_table import parse_create_table
from server.parser.tokens import TokenCursor
from storage import ScanStats, StorageEngine
from storage.compaction_policy import CompactionConfig
from storage.slice_compaction import MAX_OUTPUT_ROWS, eligible

NOW = CompactionConfig(min_deltas=2, skip_window_seconds=0)
DDL = {
    "DUPLICATE": "CREATE TABLE t (k INT, g INT, v INT, w VARCHAR(8)) DUPLICATE KEY(k, g) "
                 "DISTRIBUTED BY HASH(k) BUCKETS 8",
    "AGGREGATE": "CREATE TABLE t (k INT, g INT, v INT SUM, m INT MAX, w VARCHAR(8) REPLACE, "
                 "x INT REPLACE_IF_NOT_NULL) AGGREGATE KEY(k, g) DISTRIBUTED BY HASH(k) BUCKETS 8",
    "UNIQUE": "CREATE TABLE t (k INT, g INT, v INT, w VARCHAR(8)) UNIQUE KEY(k, g) "
              "DISTRIBUTED BY HASH(k) BUCKETS 8",
}
COLUMNS = {"DUPLICATE": ["k", "g", "v", "w"], "AGGREGATE": ["k", "g", "v", "m", "w", "x"],
           "UNIQUE": ["k", "g", "v", "w"]}


def open_catalog(path: Path) -> Catalog:
    cat = Catalog(path / "meta", StorageEngine(str(path / "storage")), backend_num=1)
    cat.open()
    return cat


def make(path: Path, model: str, loads: int = 6, seed: int = 1) -> Catalog:
    cat = open_catalog(path)
    cat.create_database("db")
    cat.create_table("db", parse_create_table(TokenCursor(
        DDL[model] + ' PROPERTIES ("replication_num" = "1")')))
    rng = random.Random(seed)
    for _ in range(loads):
        n = 40
        data = {"k": pa.array([rng.choice([None, *range(12)]) for _ in range(n)], pa.int32()),
                "g": pa.array([rng.randrange(3) for _ in range(n)], pa.int32()),
                "v": pa.array([rng.choice([None, *range(100)]) for _ in range(n)], pa.int32()),
                "w": pa.array([rng.choice([None, "a", "bb", "ccc"]) for _ in range(n)])}
        if model == "AGGREGATE":
            data["m"] = pa.array([rng.choice([None, *range(50)]) for _ in range(n)], pa.int32())
            data["x"] = pa.array([rng.choice([None, 1, 2, 3]) for _ in range(n)], pa.int32())
        load_table(cat, "db", "t", pa.table(data), datetime.now())
    return cat


def rows(cat: Catalog, model: str) -> list[tuple]:
    table = cat.get_table("db", "t")
    out = []
    for p in table.partitions.values():
        for tid in p.tablets:
            t = cat.engine.get_tablet(tid).read(p.visible_version, COLUMNS[model], [],
                                                ScanStats())
            out += [(tid, *r) for r in zip(*(t.column(c).to_pylist() for c in COLUMNS[model]))]
    return sorted(out, key=repr)


def rowsets(cat: Catalog) -> dict[int, list[tuple[int, int, bool]]]:
    table = cat.get_table("db", "t")
    return {tid: [(r.start_version, r.end_version, r.load_file is not None)
                  for r in cat.engine.get_tablet(tid).rowsets()]
            for p in table.partitions.values() for tid in p.tablets}


def slice_round(cat: Catalog) -> int:
    done = 0
    for tasks in slice_tasks(cat, tablet_refs(cat), NOW, 0.0 + 10**10, lambda ref: False):
        done += run_slice_compaction(cat, tasks)
    return done


@pytest.mark.parametrize("model", ["DUPLICATE", "AGGREGATE"])
def test_slice_compaction_equals_the_per_tablet_compaction(tmp_path, model):
    grouped, single = make(tmp_path / "a", model), make(tmp_path / "b", model)
    before = rows(grouped, model)
    assert rows(single, model) == before
    assert slice_round(grouped) == 8  # every tablet, one group
    assert compact_all(single, NOW, kinds=(CUMULATIVE,)) == 8
    assert rows(grouped, model) == rows(single, model) == before
    # the same version ranges; the outputs are slices of one new file
    assert rowsets(grouped) == {t: [(a, b, True) for a, b, _ in r]
                                for t, r in rowsets(single).items()}
    files = {r.load_file for tid in grouped.engine.tablet_ids()
             for r in grouped.engine.get_tablet(tid).rowsets()}
    assert len(files) == 1 and next(iter(files)).startswith("compact_")
    # the input files went with their last reference
    assert sorted(p.name for p in (tmp_path / "a/storage").rglob("*.arrow")) == sorted(files)
    grouped.close()
    single.close()
    reopened = open_catalog(tmp_path / "a")
    assert rows(reopened, model) == before
    assert reopened.begin_txn() > int(next(iter(files)).split("_")[1])
    reopened.close()


def test_a_tablet_whose_inputs_changed_is_left_out(tmp_path):
    cat = make(tmp_path, "DUPLICATE")
    before = rows(cat, "DUPLICATE")
    [tasks] = slice_tasks(cat, tablet_refs(cat), NOW, 10**10, lambda ref: False)
    moved = tasks[0]
    assert compact_tablet(cat, moved.ref, CUMULATIVE, NOW)  # its inputs compacted meanwhile
    assert run_slice_compaction(cat, tasks) == len(tasks) - 1
    assert rows(cat, "DUPLICATE") == before
    assert moved.tablet.compaction.running == ""
    cat.close()


def test_unique_and_large_inputs_keep_the_per_tablet_path(tmp_path):
    cat = make(tmp_path / "u", "UNIQUE")
    assert slice_tasks(cat, tablet_refs(cat), NOW, 10**10, lambda ref: False) == []
    cat.close()
    cat = make(tmp_path / "d", "DUPLICATE", loads=3)
    tablet = cat.engine.get_tablet(next(iter(cat.engine.tablet_ids())))
    metas = tablet.rowsets()
    assert eligible(tablet, metas)
    metas[0].num_rows += MAX_OUTPUT_ROWS  # (only the policy's view of it)
    assert not eligible(tablet, metas)
    cat.close()
