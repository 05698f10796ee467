"""Rollup DDL: ADD / DROP ROLLUP, CANCEL ALTER TABLE, SHOW ALTER TABLE ROLLUP rows, and waiting.

ADD ROLLUP checks Doris's rules (catalog/rollup.py) under the catalog lock and journals a
WAITING_TXN job per rollup (catalog/rollup_job.py); DROP ROLLUP takes the table's load gate and
lock, then the catalog lock (a load's order).
"""

from __future__ import annotations

import time
from datetime import datetime

from catalog import rollup_job
from catalog.catalog import Catalog
from catalog.errors import DdlError
from catalog.load import table_lock
from catalog.load_gate import load_gate
from catalog.model import MaterializedIndexMeta
from catalog.rollup import analyze_rollup, base_index_of
from catalog.statements import AddRollupStmt, CancelAlterTableStmt, DropRollupStmt

SHOW_COLUMNS = ["JobId", "TableName", "CreateTime", "FinishTime", "BaseIndexName",
                "RollupIndexName", "RollupId", "TransactionId", "State", "Msg", "Progress",
                "Timeout"]


def resolve(cat: Catalog, db: str | None, table: str) -> tuple[str, int]:
    with cat.lock:
        return cat.get_db(db).name, cat.get_table(db, table).table_id


check_normal = rollup_job.check_normal


def add_rollups(cat: Catalog, db: str | None, stmt: AddRollupStmt) -> list[rollup_job.RollupJob]:
    db_name, _ = resolve(cat, stmt.db or db, stmt.table)
    with cat.lock:
        table = cat.get_table(db_name, stmt.table)
        check_normal(cat, table)
        rollup_job.check_no_temp_partitions(table)
        jobs, taken = [], set()
        for desc in stmt.rollups:
            base_id = base_index_of(table, desc.from_index)
            index = analyze_rollup(table, desc, 0, taken)
            taken.add(index.name)
            jobs.append((index, base_id, _timeout(cat, desc.properties)))
        created = []
        for index, base_id, timeout in jobs:
            index.index_id = cat._alloc_id()
            created.append(rollup_job.create_pending(cat, db_name, table, index, base_id,
                                                     timeout))
    for job in created:
        rollup_job.start(cat, job)
    return created


def add_index_job(cat: Catalog, db_name: str, table_name: str, index: MaterializedIndexMeta,
                  properties: dict[str, str]) -> rollup_job.RollupJob:
    """A prepared index (a materialized view) built by a job; the caller holds cat.lock."""
    table = cat.get_table(db_name, table_name)
    check_normal(cat, table)
    rollup_job.check_no_temp_partitions(table)
    index.index_id = cat._alloc_id()
    return rollup_job.create_pending(cat, db_name, table, index, table.base_index_id,
                                     _timeout(cat, properties))


def _timeout(cat: Catalog, properties: dict[str, str]) -> int:
    raw = properties.get("timeout")
    if raw is None:
        return int(cat.fe_config_get("alter_table_timeout_second") or
                   rollup_job.DEFAULT_TIMEOUT_S)
    try:
        return int(raw)
    except ValueError:
        raise DdlError(f"Invalid timeout format: {raw}") from None


def drop_rollups(cat: Catalog, db: str | None, stmt: DropRollupStmt) -> None:
    db_name, table_id = resolve(cat, stmt.db or db, stmt.table)
    with load_gate(table_id).exclusive(), table_lock(table_id), cat.lock:
        table = cat.get_table(db_name, stmt.table)
        check_normal(cat, table)
        rollup_job.drop_rollups(cat, db_name, table, stmt.names, stmt.if_exists)


def cancel(cat: Catalog, db: str | None, stmt: CancelAlterTableStmt) -> None:
    db_name, table_id = resolve(cat, stmt.db or db, stmt.table)
    kind = "SCHEMA_CHANGE" if stmt.kind == "COLUMN" else "ROLLUP"
    with cat.lock:
        jobs = [j for j in cat.alter_jobs.values()
                if j.table_id == table_id and j.state in rollup_job.ACTIVE and j.kind == kind
                and (not stmt.job_ids or j.job_id in stmt.job_ids)]
        if not jobs and kind == "SCHEMA_CHANGE":
            raise DdlError(f"Table[{stmt.table}] is not under SCHEMA_CHANGE.")
        if not jobs:
            raise DdlError(f"Table[{stmt.table}] is not under ROLLUP. Use 'ALTER TABLE DROP "
                           f"ROLLUP' if you want to.")
    for job in jobs:
        rollup_job.cancel(cat, job.job_id, "user cancelled")


def show_rows(cat: Catalog, db: str | None, kind: str) -> list[tuple]:
    """SHOW ALTER TABLE ROLLUP | MATERIALIZED VIEW: one row per job of the database."""
    if kind == "COLUMN":
        from catalog.schema_change_job import show_rows as show_column_jobs
        return show_column_jobs(cat, db)
    want_mv = kind == "MATERIALIZED VIEW"
    with cat.lock:
        jobs = [j for j in rollup_job.jobs_of_db(cat, cat.get_db(db))
                if j.is_mv == want_mv and j.kind == "ROLLUP"]
        return [(j.job_id, j.table_name, format_time(j.create_time), format_time(j.finish_time),
                 j.base_index_name, j.index_name, j.index_id, j.txn_id, j.state, j.msg,
                 f"{j.done_tablets}/{j.total_tablets}" if j.state == rollup_job.RUNNING
                 else "NULL", j.timeout_s) for j in jobs]


def format_time(t: float | None) -> str:
    return "NULL" if t is None else datetime.fromtimestamp(t).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def wait_jobs(cat: Catalog, db: str | None, timeout_s: float = 120.0) -> None:
    """Block until no job of the database is WAITING_TXN or RUNNING (ADMIN WAIT ALTER TABLE)."""
    with cat.lock:
        db_name = cat.get_db(db).name
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with cat.lock:
            if not any(j.db == db_name and j.state in rollup_job.ACTIVE
                       for j in cat.alter_jobs.values()):
                return
        time.sleep(0.02)
    raise DdlError("Timed out waiting for alter jobs")
