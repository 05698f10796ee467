"""ADD ROLLUP / CREATE MATERIALIZED VIEW as Doris's RollupJobV2: an asynchronous, journaled job.

The life of a job:
 0. `create_pending` (the ALTER statement): the job is journaled in state WAITING_TXN with its
    watershed transaction and its new index, already in the table in state SHADOW with a
    tablet per bucket of every partition, placed like the base bucket's (`rollup_job_create`),
    and the statement returns. From then on every load that opens and every DELETE writes the
    shadow tablets too (catalog/load_sink.py writes every index of the table), at the versions
    the base gets; queries never read a SHADOW index (planner/select_rollup.py).
 1. `activate` (the job's thread): as Doris's job waits for the transactions begun before its
    watershed transaction, it waits at the table's load gate for the loads that entered before
    (catalog/load_gate.py: `watershed`, `wait_before`; new loads never wait); those may lack
    the shadow index and still publish meanwhile (catalog/load.py). Then, under the table's
    load lock (no publish half-way), the partitions' visible versions become the job's
    *watershed* and it is RUNNING (`rollup_job_run`, for all the jobs of a schema change
    statement at once: catalog/schema_change_job.py). A CANCEL meanwhile ends the wait.
 2. `_convert` (the same thread): each base tablet is read at its partition's watershed
    version V (merged, DELETEs applied) and its rows become one rowset of the shadow tablet
    spanning versions [2, V] (the index's own sort, keys and aggregation: Tablet.write_rowset).
    Compaction leaves the table's tablets alone while a job runs (catalog/compaction.py), so
    the versions up to the watershed stay readable.
 3. One journal entry `rollup_job_finish` publishes every converted rowset in place of the
    rowsets loads wrote in the shadow tablets at versions up to V (their rows are in the base
    at V), and turns the index NORMAL: queries see the complete rollup, exactly the base's
    rows, or none of it (a schema change's last job swaps the new indexes in, after the loads
    in flight: `_finish`).
A crash before 3 leaves the job WAITING_TXN or RUNNING in the journal: the converted files
are unpublished orphans (removed at start-up) and `resume_jobs` goes on from step 1 or 2; the
shadow tablets kept the loads that arrived meanwhile. `cancel` (CANCEL ALTER TABLE ROLLUP, a
timeout, a failure) drops the shadow index and its tablets (`rollup_job_cancel`); a load that
wrote them publishes its other rowsets. DROP ROLLUP / DROP MATERIALIZED VIEW of a NORMAL index
is `drop_rollup`. The journal operations and their apply functions:
catalog/rollup_job_journal.py.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from catalog.errors import DdlError
from catalog.index_rows import index_rows, source_columns
from catalog.model import MaterializedIndexMeta, OlapTable
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


def jobs_of_db(cat: Catalog, db) -> list[RollupJob]:
    """The jobs of database `db` (a catalog.model.Database; the caller holds the catalog lock),
    by job id. Doris finds them by the database's id: a database dropped and created again
    under its name does not list the old one's jobs. Ids come from one counter, so the tables of
    this database have larger ids than it."""
    return sorted((j for j in cat.alter_jobs.values()
                   if j.db == db.name and j.table_id > db.db_id), key=lambda j: j.job_id)


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


# -- creating ----------------------------------------------------------------------------------
def create_pending(cat: Catalog, db: str, table: OlapTable, index: MaterializedIndexMeta,
                   base_index_id: int, timeout_s: int = DEFAULT_TIMEOUT_S, kind: str = "ROLLUP",
                   new_schema: dict | None = None, group: int = 0,
                   txn_id: int | None = None) -> RollupJob:
    """Journal a WAITING_TXN job and its SHADOW index `index` (analysed; its id allocated; for
    a schema change the shadow index rebuilding `base_index_id`) with its tablets; the caller
    holds cat.lock. `start` runs it. The jobs of one schema change share their group and
    watershed `txn_id`."""
    job = RollupJob(cat._alloc_id(), db, table.table_id, table.name, base_index_id,
                    table.indexes[base_index_id].name, index.index_id, index.name,
                    cat.begin_txn() if txn_id is None else txn_id, cat.clock(), timeout_s,
                    index.is_mv, state=WAITING_TXN, kind=kind, new_schema=new_schema,
                    group=group)
    _create_shadow(cat, db, table, job, index)
    return cat.alter_jobs[job.job_id]


def _create_shadow(cat: Catalog, db: str, table: OlapTable, job: RollupJob,
                   index: MaterializedIndexMeta) -> None:
    """Journal `rollup_job_create`: the job (WAITING_TXN) and its index in state SHADOW with a
    tablet per bucket of every partition, placed like the base bucket's; caller holds
    cat.lock. Every load that snapshots the table's indexes from then on writes it."""
    index.state = "SHADOW"
    tablets: dict[str, list] = {}
    for p in table.sorted_partitions():
        base = p.tablets_by_index[job.base_index_id]
        tablets[str(p.partition_id)] = [[cat._alloc_id(), list(p.tablets[tid].replicas)]
                                        for tid in base]
    job = RollupJob(**{**job.to_dict(), "state": WAITING_TXN, "pending_index": None,
                       "total_tablets": sum(len(v) for v in tablets.values())})
    cat._log("rollup_job_create", {"db": db, "table": table.name, "job": job.to_dict(),
                                   "index": index.to_dict(), "tablets": tablets,
                                   "next_id": cat.next_id})


def start(cat: Catalog, job: RollupJob) -> None:
    threading.Thread(target=run_job, args=(cat, job.job_id), daemon=True,
                     name=f"rollup-{job.job_id}").start()


def resume_jobs(cat: Catalog) -> None:
    """After a restart: go on with every job the journal left WAITING_TXN or RUNNING."""
    for job in list(cat.alter_jobs.values()):
        if job.state in ACTIVE:
            start(cat, job)


def _siblings(cat: Catalog, job: RollupJob) -> list[RollupJob]:
    """The job and the other jobs of its schema change statement (its group)."""
    if not job.group:
        return [job]
    return [j for j in cat.alter_jobs.values() if j.group == job.group]


# -- waiting for the loads begun before the watershed -------------------------------------------
def activate(cat: Catalog, job_id: int) -> bool:
    """WAITING_TXN -> RUNNING. The shadow index exists, so loads entering the table's gate from
    now on write it (a new gate epoch); once the loads of earlier epochs have published or
    aborted (new loads never wait), the partitions' visible versions become the watershed of
    every job of the group (`rollup_job_run`, under the table's load lock: no publish is
    half-way). False when the job was cancelled meanwhile or its table is gone (then it is
    cancelled)."""
    from catalog.load import table_lock
    from catalog.load_gate import load_gate

    with cat.lock:
        job = cat.alter_jobs.get(job_id)
        if job is None or job.state != WAITING_TXN:
            return job is not None and job.state == RUNNING
        table_id = job.table_id
    if job.pending_index is not None:  # journaled by a version that made the index later
        _create_pending_shadows(cat, job)
        with cat.lock:
            job = cat.alter_jobs[job_id]  # the entry made it anew
    gate = load_gate(table_id)
    gate.wait_before(gate.watershed(), give_up=lambda: job.state != WAITING_TXN)
    # Past the wait's limit (a two-phase load never committed) the job goes on: a load of an
    # earlier epoch that lacks the shadow index is refused at its publish once it is RUNNING.
    with table_lock(table_id), cat.lock:
        job = cat.alter_jobs[job_id]
        if job.state != WAITING_TXN:
            return job.state == RUNNING  # a job of its group activated it
        try:
            _, table = cat.find_table_by_id(job.table_id)
        except DdlError:
            table = None
        waiting = [j for j in _siblings(cat, job) if j.state == WAITING_TXN]
        if table is None or any(j.base_index_id not in table.indexes or
                                j.index_id not in table.indexes for j in waiting):
            cat._log("rollup_job_cancel", {"job_id": job_id, "time": cat.clock(),
                                           "msg": "table or base index was dropped"})
            return False
        watershed = {str(p.partition_id): p.visible_version for p in table.sorted_partitions()}
        cat._log("rollup_job_run", {"job_ids": [j.job_id for j in waiting],
                                    "watershed": watershed})
    return True


def _create_pending_shadows(cat: Catalog, job: RollupJob) -> None:
    """A WAITING_TXN job journaled with only its analysed index (`rollup_job_pending`, before
    shadow indexes were made by the ALTER statement): make its group's shadow indexes now."""
    from catalog.load import table_lock

    with table_lock(job.table_id), cat.lock:
        try:
            db, table = cat.find_table_by_id(job.table_id)
        except DdlError:
            return  # activate cancels it
        for j in _siblings(cat, job):
            if j.state == WAITING_TXN and j.pending_index is not None and \
                    j.base_index_id in table.indexes:
                _create_shadow(cat, j.db, table, j, MaterializedIndexMeta.from_dict(
                    j.pending_index))


# -- running -----------------------------------------------------------------------------------
def run_job(cat: Catalog, job_id: int) -> None:
    try:
        if activate(cat, job_id):
            _convert(cat, job_id)
    except Exception as e:  # noqa: BLE001 - a job thread: the failure becomes the job's Msg
        if cat.alter_jobs[job_id].state not in ACTIVE:  # cancelled under it: its tablets went
            log.info("rollup job %d stopped: %s", job_id, cat.alter_jobs[job_id].state)
            return
        log.exception("rollup job %d failed", job_id)
        cancel(cat, job_id, f"failed: {e}")


def _convert(cat: Catalog, job_id: int) -> None:
    """Each base tablet read at its partition's watershed version V becomes one rowset of the
    shadow tablet spanning [2, V]; it replaces the rowsets loads begun during WAITING_TXN wrote
    there at versions up to V (their rows are in the base at V), so the index ends exactly
    as the base."""
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
            delay = cat.fe_config_get("rollup_job_tablet_delay_ms")
            if delay:
                time.sleep(delay / 1000)  # test hook: a job slow enough to be killed mid-way
            if _timed_out(cat, job) or job.state != RUNNING:
                if job.state == RUNNING:
                    cancel(cat, job_id, "Timeout")
                return
            if version > 1 and cat.engine.has_tablet(base_tid):
                rows = cat.engine.get_tablet(base_tid).read(version, columns, [], ScanStats())
                tablet = cat.engine.get_tablet(rollup_tid)
                if rows.num_rows or tablet.rowsets(version):
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


