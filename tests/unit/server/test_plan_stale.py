"""A statement bound while a heavy schema change swaps the table's index in: the bound tablets
are gone when its snapshots are captured, and the statement is bound again
(planner/binder.py PlanStale, server/handlers/query.py _bind) instead of reading the table as
empty. The swap is made to land in that window: bucket pruning, which runs between binding and
capture outside the catalog lock, waits on its first call for the schema change job to finish."""

from __future__ import annotations

import time

import pyarrow as pa
import pytest

import planner.binder as binder
from catalog import rollup_job
from server.handlers import plan_cache
from server.session import DorisSession
from session_testutil import run, sessions


@pytest.fixture(autouse=True)
def _bind_every_run(monkeypatch):
    """These races are the binder's: every run binds (no kept plan, handlers/plan_cache.py)."""
    monkeypatch.setattr(plan_cache, "get", lambda key, epoch: None)


def rows(result) -> list[tuple]:
    batches = list(result.batches)
    return [] if not batches else [tuple(r.values()) for r in
                                   pa.concat_tables(batches).to_pylist()]


def _wait_finished(cat, table: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with cat.lock:
            jobs = [j for j in cat.alter_jobs.values() if j.table_name == table]
        if jobs and all(j.state == rollup_job.FINISHED for j in jobs):
            return
        time.sleep(0.01)
    raise AssertionError(f"the schema change of {table} did not finish")


def _before_first_call(monkeypatch, name: str, action, record=None) -> list:
    """planner.binder's `name` replaced by a wrapper that runs `action` once, before its
    first call; the returned list gets `record(first argument)` (or 1) after every call."""
    real, calls, started = getattr(binder, name), [], []

    def wrapped(*args, **kwargs):
        if not started:
            started.append(1)
            action()
        out = real(*args, **kwargs)
        calls.append(record(args[0]) if record is not None else 1)
        return out

    monkeypatch.setattr(binder, name, wrapped)
    return calls


@pytest.mark.parametrize("model", [
    "UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 2 PROPERTIES (\"replication_num\" = \"1\", "
    "\"enable_unique_key_merge_on_write\" = \"true\")",
    "DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 3 PROPERTIES (\"replication_num\" = \"1\")"])
def test_query_bound_before_the_swap_reads_the_new_index(services, monkeypatch, model):
    s, = sessions(services, "stale")
    table = "mow" if model.startswith("UNIQUE") else "dup"
    run(s, f"DROP TABLE IF EXISTS {table} FORCE")
    run(s, f"CREATE TABLE {table} (id INT, v INT) {model}")
    run(s, f"INSERT INTO {table} VALUES (1, 1), (2, 2), (3, 3)")
    run(s, f"INSERT INTO {table} VALUES (1, 10)")
    expected = rows(run(s, f"SELECT id, v FROM {table} ORDER BY id, v"))

    # the first binding waits for the ALTER's job to swap the index in
    calls = _before_first_call(monkeypatch, "prune_buckets",
                               lambda: _wait_finished(services.catalog, table))
    run(s, f"ALTER TABLE {table} MODIFY COLUMN v BIGINT")
    assert rows(run(s, f"SELECT id, v FROM {table} ORDER BY id, v")) == expected
    assert len(calls) == 2  # bound twice: the first binding's tablets were swapped out
    assert [r[1] for r in rows(run(s, f"DESC {table}"))] == ["INT", "BIGINT"]


def test_query_bound_before_an_insert_overwrite_reads_the_new_partitions(services, monkeypatch):
    """The overwrite replaces the partitions the query was bound to (new partition ids) before
    its partitions are pruned: read as absent, the table would look empty."""
    s, writer = sessions(services, "stale", 2)
    run(s, "DROP TABLE IF EXISTS io FORCE")
    run(s, "CREATE TABLE io (id INT, v INT) DUPLICATE KEY(id) PARTITION BY RANGE(id) "
           "(PARTITION p1 VALUES LESS THAN (100), PARTITION p2 VALUES LESS THAN (1000)) "
           "DISTRIBUTED BY HASH(id) BUCKETS 4 PROPERTIES (\"replication_num\" = \"1\")")
    run(s, "INSERT INTO io VALUES (1, 1), (2, 2), (150, 3)")

    _before_first_call(monkeypatch, "_finalize_scans", lambda: run(
        writer, "INSERT OVERWRITE TABLE io VALUES (1, 10), (150, 30), (151, 31)"))
    assert rows(run(s, "SELECT id, v FROM io ORDER BY id")) == [(1, 10), (150, 30), (151, 31)]
    assert rows(run(s, "SELECT count(*) FROM io WHERE id > 100")) == [(2,)]


def test_a_rollup_finished_after_the_capture_is_not_read(services, monkeypatch):
    """The scan reads what it captured: a rollup that becomes visible between the capture and
    the index choice has no snapshot in the statement, so the base serves it; the next
    statement captures and reads the rollup."""
    s, = sessions(services, "stale")
    run(s, "DROP TABLE IF EXISTS agg FORCE")
    run(s, "CREATE TABLE agg (k1 INT, k2 INT, v BIGINT SUM) AGGREGATE KEY(k1, k2) "
           "DISTRIBUTED BY HASH(k1) BUCKETS 2 PROPERTIES (\"replication_num\" = \"1\")")
    run(s, "INSERT INTO agg VALUES (1, 1, 10), (1, 2, 20), (2, 1, 5)")

    def add_rollup() -> None:
        run(DorisSession(services), "ALTER TABLE stale.agg ADD ROLLUP r_k2 (k2, v)")
        _wait_finished(services.catalog, "agg")

    chosen = _before_first_call(monkeypatch, "select_rollups", add_rollup, _scan_index)
    sql = "SELECT k2, sum(v) FROM agg GROUP BY k2 ORDER BY k2"
    assert rows(run(s, sql)) == [(1, 15), (2, 20)]
    assert rows(run(s, sql)) == [(1, 15), (2, 20)]
    assert chosen == ["agg", "r_k2"], chosen


def _scan_index(plan) -> str:
    from planner import logical as L
    while not isinstance(plan, L.OlapScan):
        plan = plan.input
    return plan.index_name


def test_partitions_replaced_after_the_capture_are_read_from_the_captured_base(services,
                                                                               monkeypatch):
    """INSERT OVERWRITE between the capture and the index choice: the rollup's tablets of the
    replaced partitions are not found by partition any more, so the captured base snapshots
    serve the statement (before: KeyError in the index choice)."""
    s, writer = sessions(services, "stale", 2)
    run(s, "DROP TABLE IF EXISTS ro FORCE")
    run(s, "CREATE TABLE ro (k1 INT, k2 INT, v BIGINT SUM) AGGREGATE KEY(k1, k2) "
           "DISTRIBUTED BY HASH(k1) BUCKETS 2 ROLLUP (r_k2 (k2, v)) "
           "PROPERTIES (\"replication_num\" = \"1\")")
    run(s, "INSERT INTO ro VALUES (1, 1, 10), (1, 2, 20), (2, 1, 5)")
    sql = "SELECT k2, sum(v) FROM ro GROUP BY k2 ORDER BY k2"
    assert rows(run(s, sql)) == [(1, 15), (2, 20)]

    chosen = _before_first_call(monkeypatch, "select_rollups", lambda: run(
        writer, "INSERT OVERWRITE TABLE ro VALUES (1, 1, 1)"), _scan_index)
    assert rows(run(s, sql)) == [(1, 15), (2, 20)]  # the snapshot taken before the overwrite
    assert rows(run(s, sql)) == [(1, 1)]
    assert chosen == ["ro", "r_k2"], chosen


def test_a_column_dropped_while_a_statement_is_planned(services, monkeypatch):
    """A light DROP COLUMN before the capture: the statement is bound again without the
    column; after the capture: the snapshots keep the schema they were taken with, so even a
    tablet without rows reads the dropped column (before: 'Unknown column' from the tablet's
    current schema, an internal error)."""
    s, writer = sessions(services, "stale", 2)
    run(s, "DROP TABLE IF EXISTS lsc FORCE")
    run(s, "CREATE TABLE lsc (k INT, v INT, x INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) "
           "BUCKETS 4 PROPERTIES (\"replication_num\" = \"1\", \"light_schema_change\" = \"true\")")
    run(s, "INSERT INTO lsc VALUES (1, 10, 100)")  # one row: three of the four tablets empty
    sql = "SELECT * FROM lsc ORDER BY k"

    def drop_x() -> None:
        run(writer, "ALTER TABLE lsc DROP COLUMN x")

    _before_first_call(monkeypatch, "prune_buckets", drop_x)  # before the capture
    assert rows(run(s, sql)) == [(1, 10)]
    monkeypatch.undo()

    run(s, "ALTER TABLE lsc ADD COLUMN x INT DEFAULT '7'")
    _before_first_call(monkeypatch, "select_rollups", drop_x)  # after the capture
    assert rows(run(s, sql)) == [(1, 10, 7)]  # as of the statement's capture
    assert rows(run(s, sql)) == [(1, 10)]
