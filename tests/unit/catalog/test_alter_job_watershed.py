"""An ALTER job's watershed on the catalog: the load gate's epochs, which loads a WAITING_TXN job
lets publish, the conversion replacing what loads wrote in the shadow tablets up to the
watershed version, and a job an older journal left WAITING_TXN without its shadow index."""

from __future__ import annotations

import threading
import time
from datetime import datetime

import pyarrow as pa
import pytest

from test_compaction import open_catalog

from catalog import rollup_job
from catalog.errors import AnalysisError
from catalog.load import commit_load, load_table, prepare_load
from catalog.load_gate import LoadGate
from catalog.rollup import analyze_rollup
from catalog.statements import RollupDesc
from server.parser.create_table import parse_create_table
from server.parser.tokens import TokenCursor
from storage import ScanStats

DDL = ("CREATE TABLE t (k1 INT NOT NULL, k2 INT NOT NULL, v BIGINT SUM) AGGREGATE KEY(k1, k2) "
       'DISTRIBUTED BY HASH(k1) BUCKETS 2 PROPERTIES ("replication_num" = "1")')


def _rows(keys: list[int], k2: int = 1, v: int = 1) -> pa.Table:
    return pa.table({"k1": keys, "k2": [k2] * len(keys), "v": pa.array([v] * len(keys),
                                                                       pa.int64())})


def _catalog(tmp_path):
    cat = open_catalog(tmp_path)
    cat.create_database("db")
    cat.create_table("db", parse_create_table(TokenCursor(DDL)))
    load_table(cat, "db", "t", _rows([1, 2, 3], k2=0), datetime.now())
    return cat


def _pending(cat, name: str = "r") -> rollup_job.RollupJob:
    """A WAITING_TXN job adding rollup `name` (k2, v), its thread not started."""
    with cat.lock:
        table = cat.get_table("db", "t")
        index = analyze_rollup(table, RollupDesc(name, ["k2", "v"]), 0)
        index.index_id = cat._alloc_id()
        return rollup_job.create_pending(cat, "db", table, index, table.base_index_id)


def _rollup_rows(cat, name: str = "r") -> list[tuple]:
    table = cat.get_table("db", "t")
    index = table.index_by_name(name)
    out = []
    for p in table.partitions.values():
        for tid in p.tablets_by_index[index.index_id]:
            t = cat.engine.get_tablet(tid).read(p.visible_version, ["k2", "v"], [], ScanStats())
            out += zip(t.column("k2").to_pylist(), t.column("v").to_pylist())
    return sorted(out)


def test_gate_waits_for_earlier_epochs_only():
    gate = LoadGate()
    before = gate.enter()
    epoch = gate.watershed()
    after = gate.enter()
    assert not gate.wait_before(epoch, timeout=0.05)  # `before` is in flight
    done = []
    waiter = threading.Thread(target=lambda: done.append(gate.wait_before(epoch, timeout=5)))
    waiter.start()
    time.sleep(0.05)
    assert not done
    before.leave()
    before.leave()  # once
    waiter.join()
    assert done == [True]  # `after` is still in flight: not waited for
    assert not gate.wait_before(gate.watershed(), timeout=0.05)
    after.leave()
    with gate.exclusive(timeout=0.05):
        pass


def test_waiting_job_lets_old_loads_publish_until_it_runs(tmp_path):
    cat = _catalog(tmp_path)
    old = prepare_load(cat, "db", "t", _rows([10]), datetime.now())
    late = prepare_load(cat, "db", "t", _rows([11]), datetime.now())
    job = _pending(cat)
    new = prepare_load(cat, "db", "t", _rows([12, 13], k2=2), datetime.now())
    assert job.index_id in new.shape[0] and job.index_id not in old.shape[0]
    commit_load(cat, old)  # begun before the job: published without the shadow index
    commit_load(cat, new)
    with cat.lock:
        table = cat.get_table("db", "t")
        watershed = {str(p.partition_id): p.visible_version for p in table.partitions.values()}
        cat._log("rollup_job_run", {"job_ids": [job.job_id], "watershed": watershed})
    with pytest.raises(AnalysisError, match="changed during the load"):
        commit_load(cat, late)  # the job runs: a load without its index is refused
    rollup_job._convert(cat, job.job_id)
    assert cat.alter_jobs[job.job_id].state == rollup_job.FINISHED
    load_table(cat, "db", "t", _rows([14], k2=2), datetime.now())
    want = [(0, 3), (1, 1), (2, 3)]  # (k2, sum(v)): `new`'s rows once, not twice
    assert _merged(_rollup_rows(cat)) == want
    cat.close()
    cat = open_catalog(tmp_path)
    assert _merged(_rollup_rows(cat)) == want
    cat.close()


def _merged(rows: list[tuple]) -> list[tuple]:
    sums: dict[int, int] = {}
    for k2, v in rows:
        sums[k2] = sums.get(k2, 0) + v
    return sorted(sums.items())


def test_cancelled_shadow_index_leaves_the_load_its_base_rows(tmp_path):
    cat = _catalog(tmp_path)
    job = _pending(cat)
    new = prepare_load(cat, "db", "t", _rows([20, 21]), datetime.now())
    rollup_job.cancel(cat, job.job_id, "user cancelled")
    commit_load(cat, new)
    table = cat.get_table("db", "t")
    assert list(table.indexes) == [table.base_index_id]
    assert {tid for _, tid, _ in new.rowsets} <= {tid for p in table.partitions.values()
                                                  for tid in p.tablets}
    cat.close()


def test_job_journaled_without_its_shadow_index_still_runs(tmp_path):
    """A WAITING_TXN job journaled by an older version (`rollup_job_pending`, the analysed
    index only) makes its shadow index when it runs."""
    cat = _catalog(tmp_path)
    with cat.lock:
        table = cat.get_table("db", "t")
        index = analyze_rollup(table, RollupDesc("r", ["k2", "v"]), cat._alloc_id())
        job = rollup_job.RollupJob(cat._alloc_id(), "db", table.table_id, "t",
                                   table.base_index_id, "t", index.index_id, "r",
                                   cat.begin_txn(), cat.clock(), state=rollup_job.WAITING_TXN,
                                   pending_index=index.to_dict())
        cat._log("rollup_job_pending", {"db": "db", "table": "t", "job": job.to_dict(),
                                        "next_id": cat.next_id})
    cat.close()
    cat = open_catalog(tmp_path)
    assert cat.alter_jobs[job.job_id].state == rollup_job.WAITING_TXN
    rollup_job.run_job(cat, job.job_id)
    assert cat.alter_jobs[job.job_id].state == rollup_job.FINISHED
    assert _merged(_rollup_rows(cat)) == [(0, 3)]
    cat.close()


def test_entering_an_open_gate_keeps_the_cpu_slot(monkeypatch):
    """No DDL holds the gate: the load enters without handing its CPU slot on (a hand-off and
    a queue for it again per INSERT, for nothing); with a DDL waiting it does hand it on."""
    import contextlib
    import threading

    from catalog import load_gate
    from catalog.load_gate import LoadGate

    handed = []

    @contextlib.contextmanager
    def blocking():
        handed.append(True)
        yield

    monkeypatch.setattr(load_gate.cpu_slots, "blocking", blocking)
    gate = LoadGate()
    gate.enter().leave()
    assert handed == []
    entered = threading.Event()
    with gate.exclusive():
        handed.clear()  # (the DDL's own wait hands its slot on too)
        t = threading.Thread(target=lambda: (gate.enter().leave(), entered.set()))
        t.start()
        assert not entered.wait(0.1)  # waits for the DDL
    t.join(5)
    assert entered.is_set() and handed == [True]
