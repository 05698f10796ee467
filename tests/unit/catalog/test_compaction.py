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


def _drain(scheduler) -> None:
    import time
    deadline = time.monotonic() + 20
    while scheduler.running()["CumulativeCompaction"] or scheduler.running()["BaseCompaction"]:
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_failed_compaction_leaves_the_tablet_readable_and_is_retried_after_the_back_off(
        tmp_path, monkeypatch):
    import time

    from catalog.compaction_scheduler import CompactionScheduler, SchedulerConfig
    from storage import rowset_writer
    cat = open_catalog(tmp_path)
    cat.create_database("db")
    cat.create_table("db", parse_create_table(TokenCursor(DDL.format(model="UNIQUE"))))
    for i in range(6):
        load(cat, [1, 2, 3, 10 + i], [i, i, i, i])
    before, counts = rows(cat), rowset_counts(cat)
    scheduler = CompactionScheduler(cat, NOW, SchedulerConfig(min_failure_interval_sec=600))
    real_write = rowset_writer.write_segments

    def disk_full(*args, **kwargs):  # the compaction's output segments cannot be written
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(rowset_writer, "write_segments", disk_full)
    produced, _ = scheduler.produce_round(now=time.time())
    _drain(scheduler)
    assert produced >= 1
    assert rows(cat) == before and rowset_counts(cat) == counts  # unchanged, readable
    failed = [cat.engine.get_tablet(t) for t in cat.engine.tablet_ids()
              if cat.engine.get_tablet(t).compaction.last_cumu_failure]
    assert failed
    monkeypatch.setattr(rowset_writer, "write_segments", real_write)
    # within min_compaction_failure_interval_sec the failed tablets are not picked again
    produced, _ = scheduler.produce_round(now=time.time() + 10)
    _drain(scheduler)
    assert all(t.compaction.last_cumu_success == 0 for t in failed)
    # after it, they are, and the compaction succeeds
    for _ in range(3):
        scheduler.produce_round(now=time.time() + 601)
        _drain(scheduler)
    assert all(t.compaction.last_cumu_success > 0 for t in failed)
    assert rows(cat) == before and max(rowset_counts(cat)) < max(counts)
    assert not any(f.endswith(".dat") and int(f.split("_")[0]) not in
                   {r.rowset_id for r in t.rowsets()}
                   for t in failed for f in __import__("os").listdir(t.directory))
    scheduler.stop()
    cat.close()


def test_producer_takes_the_highest_score_tablet_per_disk_and_permits_bound_it(tmp_path):
    from catalog.compaction_scheduler import CompactionScheduler, Permits, SchedulerConfig
    cat = open_catalog(tmp_path)
    cat.create_database("db")
    cat.create_table("db", parse_create_table(TokenCursor(DDL.format(model="DUPLICATE"))))
    for i in range(8):  # bucket of k=1 gets 8 rowsets, the other bucket fewer
        load(cat, [1] if i % 2 else [1, 2], [i] if i % 2 else [i, i])
    scheduler = CompactionScheduler(cat, NOW, SchedulerConfig(task_num_per_disk=1))
    scores = {t: scheduler.scores(cat.engine.get_tablet(t))[0] for t in cat.engine.tablet_ids()}
    best = max(scores, key=scores.get)
    assert scores[best] == 8 and sorted(scores.values())[0] < 8
    scheduler.permits.acquire(scheduler.config.total_permits)  # no permits left: blocked
    import threading
    done = threading.Event()
    threading.Thread(target=lambda: (scheduler.produce_round(), done.set()), daemon=True).start()
    assert not done.wait(0.3)
    scheduler.permits.release(scheduler.config.total_permits)
    assert done.wait(10)
    _drain(scheduler)
    assert cat.engine.get_tablet(best).compaction.last_cumu_success > 0
    # a task asking more permits than exist runs once nothing else holds any
    permits = Permits(4)
    assert permits.acquire(10)
    permits.release(10)
    scheduler.stop()
    cat.close()
