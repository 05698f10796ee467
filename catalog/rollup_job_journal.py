"""The journal operations of ALTER jobs (catalog/rollup_job.py) and DROP ROLLUP, and the apply
functions that are the only code changing the catalog for them (replay runs the same ones).

    op                  data
    rollup_job_create   {db, table, job: RollupJob dict (WAITING_TXN), index:
                         MaterializedIndexMeta dict (SHADOW), tablets: {partition id:
                         [[tablet id, [backend ids]], ...]}, next_id}
    rollup_job_run      {job_ids: [id], watershed: {partition id: version}}  -> RUNNING
    rollup_job_finish   {job_id, time, rowsets: [{partition, tablet, meta, version}]}
    rollup_job_cancel   {job_id, time, msg}
    drop_rollup         {db, table, index_ids: [id]}
    rollup_job_pending  {db, table, job: RollupJob dict (WAITING_TXN, pending_index), next_id}
                        (older journals: a job whose shadow index was made when it left
                        WAITING_TXN; such a `rollup_job_create` carries the job RUNNING with its
                        watershed. Both still replay.)

`rollup_job_finish` puts each converted rowset [2, V] in its shadow tablet in place of the
rowsets loads wrote there at versions up to V (the watershed version of its partition):
those loads' rows are in the base at V, so the index holds each row once.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from catalog.errors import DdlError
from catalog.model import MaterializedIndexMeta, OlapTable, TabletMeta
from catalog.rollup_job import CANCELLED, FINISHED, RUNNING, RollupJob
from storage import RowsetMeta

if TYPE_CHECKING:
    from catalog.catalog import Catalog

log = logging.getLogger(__name__)


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


def apply_run(cat: Catalog, data: dict) -> None:
    """The loads begun before the watershed are done: the jobs convert up to these versions."""
    for job_id in data["job_ids"]:
        job = cat.alter_jobs[job_id]
        job.state, job.watershed = RUNNING, dict(data["watershed"])
        try:
            _, table = cat.find_table_by_id(job.table_id)
        except DdlError:
            continue
        job.total_tablets = sum(len(p.tablets_by_index.get(job.index_id, ()))
                                for p in table.partitions.values()
                                if str(p.partition_id) in job.watershed)


def apply_finish(cat: Catalog, data: dict) -> None:
    job = cat.alter_jobs[data["job_id"]]
    job.state, job.finish_time, job.done_tablets = FINISHED, data["time"], job.total_tablets
    _, table = cat.find_table_by_id(job.table_id)
    for r in data["rowsets"]:
        p = table.partitions.get(r["partition"])
        if p is None or r["tablet"] not in p.tablets:
            continue  # the partition went away meanwhile
        _put_converted(cat, p.tablets[r["tablet"]], r)
    if job.kind == "SCHEMA_CHANGE":
        from catalog.schema_change_job import swap  # it builds on catalog/rollup_job.py
        swap(cat, table, job)
    elif job.index_id in table.indexes:
        table.indexes[job.index_id].state = "NORMAL"


def _put_converted(cat: Catalog, tablet: TabletMeta, r: dict) -> None:
    """The converted rowset [2, V] in place of the shadow tablet's rowsets up to V."""
    if any(x["meta"]["rowset_id"] == r["meta"]["rowset_id"] for x in tablet.rowsets):
        return  # replay of an applied entry
    version = r["version"]
    replaced = [x["meta"]["rowset_id"] for x in tablet.rowsets if x["version"] <= version]
    tablet.rowsets = [{"meta": r["meta"], "version": version},
                      *(x for x in tablet.rowsets if x["version"] > version)]
    if not _storage(cat):
        return
    meta = RowsetMeta.from_dict(r["meta"])
    engine_tablet = cat.engine.get_tablet(r["tablet"])
    if not replaced:
        engine_tablet.publish(meta, version)
    elif not engine_tablet.replace_rowsets(replaced, meta):
        log.warning("tablet %d: rowsets %s replaced by the conversion were gone", r["tablet"],
                    replaced)


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
    "rollup_job_run": apply_run,
    "rollup_job_finish": apply_finish,
    "rollup_job_cancel": apply_cancel,
    "drop_rollup": apply_drop,
}
