"""ADD ROLLUP / CREATE MATERIALIZED VIEW as Doris's RollupJobV2: an asynchronous, journaled job.

The life of a job:
 0. `create_pending` (the ALTER statement): the job is journaled in state WAITING_TXN with its
    analysed index (`rollup_job_pending`) and the statement returns. The job's thread then
    waits for the loads of the table in flight to publish or abort (catalog/load_gate.py: new
    loads wait meanwhile), as Doris's job waits for the transactions begun before its
    watershed transaction, and `activate` does step 1 for it (for all the jobs of a schema
    change statement at once: catalog/schema_change_job.py). A CANCEL meanwhile ends the wait.
 1. `create_jobs` (under the table's load lock, so no load is half-way): the new index is added
    to the table in state SHADOW with a tablet per bucket of every partition (placed like the
    base bucket's), and the partitions' visible versions are recorded as the job's *watershed*
    (journal `rollup_job_create`). From then on every load and DELETE writes the shadow tablets
    too (catalog/load.py writes every index of the table), at the versions the base gets;
    queries never read a SHADOW index (planner/select_rollup.py).
 2. `run_job` (a daemon thread): each base tablet is read at its partition's watershed version
    (merged, DELETEs applied) and its rows become one rowset of the rollup tablet spanning
    versions [2, watershed] (the rollup's own sort, keys and aggregation: Tablet.write_rowset).
    Compaction leaves the table's tablets alone while a job runs (catalog/compaction.py), so
    the versions up to the watershed stay readable.
 3. One journal entry `rollup_job_finish` publishes every converted rowset and turns the index
    NORMAL: queries see the complete rollup or none of it (a schema change's last job swaps
    the new indexes in, after the loads in flight: `_finish`).
A crash before 3 leaves the job RUNNING in the journal: the converted files are unpublished
orphans (removed at start-up) and `resume_jobs` runs the conversion again; the shadow tablets
kept the loads that arrived meanwhile. `cancel` (CANCEL ALTER TABLE ROLLUP, a timeout, a
failure) drops the shadow index and its tablets (`rollup_job_cancel`). DROP ROLLUP / DROP
MATERIALIZED VIEW of a NORMAL index is `drop_rollup`.

    op                  data
    rollup_job_pending  {db, table, job: RollupJob dict (WAITING_TXN, pending_index), next_id}
    rollup_job_create   {db, table, job: RollupJob dict, index: MaterializedIndexMeta dict,
                         tablets: {partition id: [[tablet id, [backend ids]], ...]}, next_id}
    rollup_job_finish   {job_id, time, rowsets: [{partition, tablet, meta, version}]}
    rollup_job_cancel   {job_id, time, msg}
    drop_rollup         {db, table, index_ids: [id]}
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from catalog.errors import DdlError
from catalog.index_rows import index_rows, source_columns
from catalog.model import MaterializedIndexMeta, OlapTable, TabletMeta
from storage import RowsetMeta
from storage.stats import ScanStats

if TYPE_CHECKING:
    from catalog.catalog import Catalog

log = logging.getLogger(__name__)

WAITING_TXN, RUNNING, FINISHED, CANCELLED = "WAITING_TXN", "RUNNING", "FINISHED", "CANCELLED"
ACTIVE = (WAITING_TXN, RUNNING)  # a job not done yet: the table is not NORMAL
DEFAULT_TIMEOUT_S = 86400  # Doris's alter_table_timeout_second


@dataclass
class RollupJob:
    job_id: int
    db: str
    table_id: int
    table_name: str
    base_index_id: int
    base_index_name: str
    index_id: int
    index_name: str
    txn_id: int  # the watershed transaction
    create_time: float
    timeout_s: int = DEFAULT_TIMEOUT_S
    is_mv: bool = False
    state: str = RUNNING
    finish_time: float | None = None
    msg: str = ""
    watershed: dict[str, int] = field(default_factory=dict)  # partition id -> version
    done_tablets: int = 0
    total_tablets: int = 0
    # SCHEMA_CHANGE: a heavy schema change rebuilding the index `base_index_id` as `index_id`
    # (catalog/schema_change_job.py), with the table's schema once it finishes.
    kind: str = "ROLLUP"
    new_schema: dict | None = None
    group: int = 0  # the jobs of one schema change statement (one per index) share it
    # WAITING_TXN: the analysed index (MaterializedIndexMeta dict) the job will add
    pending_index: dict | None = None

    def to_dict(self) -> dict:
        return asdict(self)

    @staticmethod
    def from_dict(d: dict) -> RollupJob:
        return RollupJob(**d)


def running_job(cat: Catalog, table_id: int) -> RollupJob | None:
    return next((j for j in cat.alter_jobs.values()
                 if j.table_id == table_id and j.state in ACTIVE), None)


def table_state(cat: Catalog, table_id: int) -> str:
    """Doris's OlapTableState of a table: ROLLUP or SCHEMA_CHANGE while an ALTER job of it is
    WAITING_TXN or RUNNING, else NORMAL."""
    job = running_job(cat, table_id)
    if job is None:
        return "NORMAL"
    return "SCHEMA_CHANGE" if job.kind == "SCHEMA_CHANGE" else "ROLLUP"


def not_normal_message(table_name: str, state: str) -> str:
    """OlapTable.checkNormalStateForAlter's message."""
    return f"Table[{table_name}]'s state({state}) is not NORMAL. Do not allow doing ALTER ops"


def check_no_temp_partitions(table: OlapTable) -> None:
    """MaterializedViewHandler / SchemaChangeHandler: no job while temporary partitions (an
    INSERT OVERWRITE's, ADD TEMPORARY PARTITION's) exist: they would lack its index."""
    if table.temp_partitions:
        raise DdlError("Can not alter table when there are temp partitions in table")


def check_normal(cat: Catalog, table: OlapTable) -> None:
    """Doris's OlapTable.checkNormalStateForAlter: a table under an ALTER job (WAITING_TXN or
    RUNNING) takes no other ALTER (a schema change's swap would also undo it: it installs the
    schema the job was analysed with), no partition DDL (ADD / DROP / REPLACE PARTITION,
    temporary partitions, INSERT OVERWRITE's) and no TRUNCATE: a partition added, replaced or
    emptied meanwhile would lack the job's shadow tablets or escape its conversion."""
    state = table_state(cat, table.table_id)
    if state != "NORMAL":
        raise DdlError(not_normal_message(table.name, state))


# -- waiting for the loads in flight -----------------------------------------------------------
def create_pending(cat: Catalog, db: str, table: OlapTable, index: MaterializedIndexMeta,
                   base_index_id: int, timeout_s: int = DEFAULT_TIMEOUT_S, kind: str = "ROLLUP",
                   new_schema: dict | None = None, group: int = 0,
                   txn_id: int | None = None) -> RollupJob:
    """Journal a WAITING_TXN job that will add `index` (analysed; its id allocated; for a
    schema change the shadow index rebuilding `base_index_id`); the caller holds cat.lock.
    `start` runs it. The jobs of one schema change share their group and watershed `txn_id`."""
    job = RollupJob(cat._alloc_id(), db, table.table_id, table.name, base_index_id,
                    table.indexes[base_index_id].name, index.index_id, index.name,
                    cat.begin_txn() if txn_id is None else txn_id, cat.clock(), timeout_s,
                    index.is_mv, state=WAITING_TXN, kind=kind, new_schema=new_schema,
                    group=group, pending_index=index.to_dict())
    cat._log("rollup_job_pending", {"db": db, "table": table.name, "job": job.to_dict(),
                                    "next_id": cat.next_id})
    return cat.alter_jobs[job.job_id]


def _siblings(cat: Catalog, job: RollupJob) -> list[RollupJob]:
    """The job and the other jobs of its schema change statement (its group)."""
    if not job.group:
        return [job]
    return [j for j in cat.alter_jobs.values() if j.group == job.group]


def activate(cat: Catalog, job_id: int) -> bool:
    """WAITING_TXN -> RUNNING: once the table's loads in flight are done (new ones wait at the
    gate meanwhile), the shadow index and its watershed are journaled (`create_jobs`), for
    every job of the group at once. False when the job was cancelled meanwhile or its table
    is gone (then it is cancelled)."""
    from catalog.load import table_lock
    from catalog.load_gate import load_gate

    with cat.lock:
        job = cat.alter_jobs.get(job_id)
        if job is None or job.state != WAITING_TXN:
            return job is not None and job.state == RUNNING
        table_id = job.table_id

    def given_up() -> bool:  # cancelled while waiting: let the loads in again at once
        return job.state != WAITING_TXN

    with load_gate(table_id).exclusive(give_up=given_up), table_lock(table_id), cat.lock:
        job = cat.alter_jobs[job_id]
        if job.state != WAITING_TXN:
            return job.state == RUNNING  # a job of its group activated it
        try:
            _, table = cat.find_table_by_id(job.table_id)
        except DdlError:
            table = None
        waiting = [j for j in _siblings(cat, job) if j.state == WAITING_TXN]
        if table is None or any(j.base_index_id not in table.indexes for j in waiting):
            cat._log("rollup_job_cancel", {"job_id": job_id, "time": cat.clock(),
                                           "msg": "table or base index was dropped"})
            return False
        for j in waiting:
            index = MaterializedIndexMeta.from_dict(j.pending_index)
            create_jobs(cat, j.db, table, [index], j.base_index_id, j.timeout_s, job=j)
    return True


# -- creating ----------------------------------------------------------------------------------
def create_jobs(cat: Catalog, db: str, table: OlapTable, indexes: list[MaterializedIndexMeta],
                base_index_id: int, timeout_s: int = DEFAULT_TIMEOUT_S, kind: str = "ROLLUP",
                new_schema: dict | None = None, group: int = 0,
                job: RollupJob | None = None) -> list[RollupJob]:
    """Journal one job per new index (RUNNING; `job`: the WAITING_TXN job of the one index
    going on); the caller holds the table's load lock and cat.lock."""
    jobs = []
    waiting = job
    for index in indexes:
        index.state = "SHADOW"
        if waiting is not None:
            job = RollupJob(**{**waiting.to_dict(), "state": RUNNING, "pending_index": None})
        else:
            job = RollupJob(cat._alloc_id(), db, table.table_id, table.name, base_index_id,
                            table.indexes[base_index_id].name, index.index_id, index.name,
                            cat.begin_txn(), cat.clock(), timeout_s, index.is_mv, kind=kind,
                            new_schema=new_schema, group=group)
        tablets: dict[str, list] = {}
        for p in table.sorted_partitions():
            base = p.tablets_by_index[base_index_id]
            tablets[str(p.partition_id)] = [[cat._alloc_id(), list(p.tablets[tid].replicas)]
                                            for tid in base]
            job.watershed[str(p.partition_id)] = p.visible_version
        job.total_tablets = sum(len(v) for v in tablets.values())
        cat._log("rollup_job_create", {"db": db, "table": table.name, "job": job.to_dict(),
                                       "index": index.to_dict(), "tablets": tablets,
                                       "next_id": cat.next_id})
        jobs.append(cat.alter_jobs[job.job_id])
    return jobs


def start(cat: Catalog, job: RollupJob) -> None:
    threading.Thread(target=run_job, args=(cat, job.job_id), daemon=True,
                     name=f"rollup-{job.job_id}").start()


def resume_jobs(cat: Catalog) -> None:
    """After a restart: go on with every job the journal left WAITING_TXN or RUNNING."""
    for job in list(cat.alter_jobs.values()):
        if job.state in ACTIVE:
            start(cat, job)


# -- running -----------------------------------------------------------------------------------
def run_job(cat: Catalog, job_id: int) -> None:
    try:
        if activate(cat, job_id):
            _convert(cat, job_id)
    except Exception as e:  # noqa: BLE001 - a job thread: the failure becomes the job's Msg
        log.exception("rollup job %d failed", job_id)
        cancel(cat, job_id, f"failed: {e}")


def _convert(cat: Catalog, job_id: int) -> None:
    with cat.lock:
        job = cat.alter_jobs[job_id]
        if job.state != RUNNING:
            return
        _, table = cat.find_table_by_id(job.table_id)
        work = [(int(pid), version, list(zip(table.partitions[int(pid)].tablets_by_index[
                    job.base_index_id], table.partitions[int(pid)].tablets_by_index[job.index_id])))
                for pid, version in job.watershed.items() if int(pid) in table.partitions]
        job.done_tablets = 0
        index = table.indexes[job.index_id]
        columns = source_columns(table, index)
    rowsets = []
    for pid, version, pairs in work:
        for base_tid, rollup_tid in pairs:
            if _timed_out(cat, job) or job.state != RUNNING:
                if job.state == RUNNING:
                    cancel(cat, job_id, "Timeout")
                return
            delay = cat.fe_config_get("rollup_job_tablet_delay_ms")
            if delay:
                time.sleep(delay / 1000)  # test hook: a job slow enough to be killed mid-way
            if version > 1 and cat.engine.has_tablet(base_tid):
                rows = cat.engine.get_tablet(base_tid).read(version, columns, [], ScanStats())
                if rows.num_rows:
                    tablet = cat.engine.get_tablet(rollup_tid)
                    meta = tablet.write_rowset(index_rows(table, index, rows), job.txn_id)
                    meta.start_version, meta.end_version = 2, version
                    rowsets.append({"partition": pid, "tablet": rollup_tid,
                                    "meta": meta.to_dict(), "version": version})
            job.done_tablets += 1
    _finish(cat, job, rowsets)


def _finish(cat: Catalog, job: RollupJob, rowsets: list[dict]) -> None:
    """Journal `rollup_job_finish`. A schema change's swap drops the old indexes, so it waits
    at the load gate for the loads in flight (they write old and new indexes: refused at their
    publish once the old ones are gone) as it does in WAITING_TXN."""
    from catalog.load import table_lock
    from catalog.load_gate import load_gate

    if job.kind != "SCHEMA_CHANGE":
        with cat.lock:
            if job.state == RUNNING:
                cat._log("rollup_job_finish", {"job_id": job.job_id, "time": cat.clock(),
                                               "rowsets": rowsets})
        return
    with load_gate(job.table_id).exclusive(give_up=lambda: job.state != RUNNING), \
            table_lock(job.table_id), cat.lock:
        if job.state == RUNNING:
            cat._log("rollup_job_finish", {"job_id": job.job_id, "time": cat.clock(),
                                           "rowsets": rowsets})


def _timed_out(cat: Catalog, job: RollupJob) -> bool:
    return cat.clock() - job.create_time > job.timeout_s


def cancel(cat: Catalog, job_id: int, msg: str) -> None:
    with cat.lock:
        job = cat.alter_jobs.get(job_id)
        if job is None or job.state not in ACTIVE:
            return
        cat._log("rollup_job_cancel", {"job_id": job_id, "time": cat.clock(), "msg": msg})


def drop_rollups(cat: Catalog, db: str, table: OlapTable, names: list[str],
                 if_exists: bool = False) -> None:
    """DROP ROLLUP r[, r2] / DROP MATERIALIZED VIEW: the caller holds the load lock."""
    ids = []
    for name in names:
        if name == table.name:
            raise DdlError("Cannot drop base index by using DROP ROLLUP or DROP MATERIALIZED VIEW.")
        index = table.index_by_name(name)
        if index is None or index.state != "NORMAL":
            if if_exists:
                continue
            raise DdlError(f"Materialized view [{name}] does not exist in table [{table.name}]")
        ids.append(index.index_id)
    if ids:
        cat._log("drop_rollup", {"db": db, "table": table.name, "index_ids": ids})


# -- apply functions ---------------------------------------------------------------------------
def _storage(cat: Catalog) -> bool:
    return not cat.replaying


def apply_pending(cat: Catalog, data: dict) -> None:
    job = RollupJob.from_dict(data["job"])
    cat.alter_jobs[job.job_id] = job
    cat.next_id = max(cat.next_id, data["next_id"])
    cat.last_txn_id = max(cat.last_txn_id, job.txn_id)


def apply_create(cat: Catalog, data: dict) -> None:
    table = cat.dbs[data["db"]].tables[data["table"]]
    index = MaterializedIndexMeta.from_dict(data["index"])
    table.indexes[index.index_id] = index
    schema = table.tablet_schema(index.index_id) if _storage(cat) else None
    for pid, tablets in data["tablets"].items():
        p = table.partitions[int(pid)]
        p.tablets_by_index[index.index_id] = [tid for tid, _ in tablets]
        for tid, replicas in tablets:
            p.tablets[tid] = TabletMeta(tid, list(replicas))
            if schema is not None:
                cat.engine.create_tablet(tid, schema)
    job = RollupJob.from_dict(data["job"])
    cat.alter_jobs[job.job_id] = job
    cat.next_id = max(cat.next_id, data["next_id"])
    cat.last_txn_id = max(cat.last_txn_id, job.txn_id)


def apply_finish(cat: Catalog, data: dict) -> None:
    job = cat.alter_jobs[data["job_id"]]
    job.state, job.finish_time, job.done_tablets = FINISHED, data["time"], job.total_tablets
    _, table = cat.find_table_by_id(job.table_id)
    for r in data["rowsets"]:
        p = table.partitions.get(r["partition"])
        if p is None or r["tablet"] not in p.tablets:
            continue  # the partition went away meanwhile
        tablet = p.tablets[r["tablet"]]
        if any(x["meta"]["rowset_id"] == r["meta"]["rowset_id"] for x in tablet.rowsets):
            continue
        tablet.rowsets.append({"meta": r["meta"], "version": r["version"]})
        if _storage(cat):
            cat.engine.get_tablet(r["tablet"]).publish(RowsetMeta.from_dict(r["meta"]),
                                                       r["version"])
    if job.kind == "SCHEMA_CHANGE":
        from catalog.schema_change_job import swap  # it builds on this module
        swap(cat, table, job)
    elif job.index_id in table.indexes:
        table.indexes[job.index_id].state = "NORMAL"


def apply_cancel(cat: Catalog, data: dict) -> None:
    job = cat.alter_jobs[data["job_id"]]
    # a schema change's jobs (one per index) go together: finished ones wait for the others
    jobs = [j for j in cat.alter_jobs.values() if j.group == job.group
            and j.state != CANCELLED] if job.group else [job]
    for j in jobs:
        j.state, j.finish_time, j.msg = CANCELLED, data["time"], data["msg"]
    try:
        _, table = cat.find_table_by_id(job.table_id)
    except DdlError:
        return
    for j in jobs:
        remove_index(cat, table, j.index_id)


def apply_drop(cat: Catalog, data: dict) -> None:
    table = cat.dbs[data["db"]].tables[data["table"]]
    for index_id in data["index_ids"]:
        remove_index(cat, table, index_id)


def remove_index(cat: Catalog, table: OlapTable, index_id: int) -> None:
    table.indexes.pop(index_id, None)
    for p in table.partitions.values():
        for tid in p.tablets_by_index.pop(index_id, []):
            p.tablets.pop(tid, None)
            if _storage(cat) and cat.engine.has_tablet(tid):
                cat.engine.drop_tablet(tid)


APPLY = {
    "rollup_job_pending": apply_pending,
    "rollup_job_create": apply_create,
    "rollup_job_finish": apply_finish,
    "rollup_job_cancel": apply_cancel,
    "drop_rollup": apply_drop,
}
