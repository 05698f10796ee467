"""Heavy schema change as Doris's SchemaChangeJobV2, run by the ADD ROLLUP job machinery.

A change that alters how rows are stored (a key column added or dropped, a column's type
changed, columns reordered) rewrites the base index into new tablets:

 0. `create_job` (the ALTER statement, under the catalog lock only): one job per changed index
    is journaled WAITING_TXN (`rollup_job_create`, kind SCHEMA_CHANGE, the table's new schema
    in the job, one watershed transaction for the statement) with its SHADOW index
    `__doris_shadow_<index>`: the new column definitions (`MaterializedIndexMeta.schema`) and
    a tablet per bucket of every partition. The statement returns at once, as Doris's
    SchemaChangeJobV2. Loads from then on write the shadow indexes too, their rows converted
    (catalog/index_rows.py: columns cast to the new types, new columns filled with their
    DEFAULT); queries keep reading the old indexes. SHOW ALTER TABLE COLUMN shows the jobs
    WAITING_TXN while loads begun before are in flight.
 1. The jobs' thread (catalog/rollup_job.py:activate), once those loads published or aborted:
    the partitions' visible versions become the watershed of every job of the statement
    (`rollup_job_run`, RUNNING).
 2. The job's thread (catalog/rollup_job.py:run_job) reads each old tablet at the watershed,
    converts its rows the same way and writes them into the shadow tablet.
 3. `rollup_job_finish` publishes them (in place of what loads wrote there up to the
    watershed) and `swap` makes the shadow index the base: the table gets its new schema, the
    old index and its tablets go, all in that one journal entry. A rollup whose columns change
    is rebuilt the same way, by a job of its own; the jobs of one statement form a group
    (`RollupJob.group`) and the swap waits for the last of them.

CANCEL ALTER TABLE COLUMN (WAITING_TXN or RUNNING), a timeout or a failure drop the shadow
indexes of the whole group (`rollup_job_cancel`); a restart resumes WAITING_TXN and RUNNING
jobs (the old schema stays readable until the swap). Refused: changes of a materialized
view's computed columns, and tables with temporary partitions (as Doris).
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

from catalog import rollup_job
from catalog.errors import DdlError
from catalog.index_journal import update_tablet_schemas
from catalog.model import MaterializedIndexMeta, OlapTable
from catalog.rollup_ddl import format_time
from catalog.rollup_job_journal import remove_index
from catalog.schema_change import apply_schema

if TYPE_CHECKING:
    from catalog.catalog import Catalog
    from catalog.schema_change import _Plan

SHADOW_NAME_PREFIX = "__doris_shadow_"
KIND = "SCHEMA_CHANGE"
SHOW_COLUMNS = ["JobId", "TableName", "CreateTime", "FinishTime", "IndexName", "IndexId",
                "OriginIndexId", "SchemaVersion", "TransactionId", "State", "Msg", "Progress",
                "Timeout"]


def create_job(cat: Catalog, db: str, table: OlapTable, plan: _Plan,
               properties: dict[str, str]) -> list[rollup_job.RollupJob]:
    """Journal one WAITING_TXN job per changed index (base and rollups, one group, one
    watershed transaction); the caller holds cat.lock. Every shadow index is analysed first,
    so a refused change journals nothing."""
    from catalog.rollup_ddl import _timeout

    rollup_job.check_no_temp_partitions(table)
    timeout = _timeout(cat, properties)
    origins = sorted(plan.changed_indexes, key=lambda i: i != table.base_index_id)
    shadows = [(_shadow_index(cat, table, plan, table.indexes[i]), i) for i in origins]
    group, txn_id, schema = cat._alloc_id(), cat.begin_txn(), plan.schema()
    return [rollup_job.create_pending(cat, db, table, index, origin_id, timeout, kind=KIND,
                                      new_schema=schema, group=group, txn_id=txn_id)
            for index, origin_id in shadows]


def _shadow_index(cat: Catalog, table: OlapTable, plan: _Plan,
                  origin: MaterializedIndexMeta) -> MaterializedIndexMeta:
    """The new index an origin index is rebuilt as: its columns in the new schema."""
    if origin.define_exprs:
        raise DdlError(f"Can not modify column contained by mv, mv={origin.name}")
    if origin.index_id == table.base_index_id:
        columns = [copy.copy(c) for c in plan.columns]
    else:
        old = {c.name: c for c in table.index_columns(origin.index_id)}
        columns = []
        for name in plan.indexes[origin.index_id]:
            col = copy.copy(plan.column(name))
            if name in old:  # the rollup's own key flag and aggregation
                col.is_key, col.aggregation = old[name].is_key, old[name].aggregation
            columns.append(col)
    if [c.is_key for c in columns] != sorted((c.is_key for c in columns), reverse=True):
        raise DdlError(f"Invalid column order. value should be after key. index[{origin.name}]")
    return MaterializedIndexMeta(cat._alloc_id(), SHADOW_NAME_PREFIX + origin.name,
                                 [c.name for c in columns], origin.keys_type,
                                 sum(c.is_key for c in columns),
                                 properties={"origin_index_id": str(origin.index_id)},
                                 schema=[c.to_dict() for c in columns])


def start(cat: Catalog, jobs: list[rollup_job.RollupJob]) -> None:
    for job in jobs:
        rollup_job.start(cat, job)


def swap(cat: Catalog, table: OlapTable, job: rollup_job.RollupJob) -> None:
    """rollup_job_finish of a schema change job: once every job of its statement finished,
    the new indexes replace the old ones and the table gets its new schema."""
    group = [j for j in cat.alter_jobs.values() if j.group == job.group] if job.group \
        else [job]
    if any(j.state != rollup_job.FINISHED for j in group):
        return  # the others are still converting: the new index stays SHADOW
    for j in group:
        new, old = table.indexes.get(j.index_id), table.indexes.get(j.base_index_id)
        if new is None or old is None:
            return  # replay of an already swapped job
        key_count = None if old.key_count is None else sum(
            c["is_key"] for c in new.schema or [])
        new.name, new.schema, new.state, new.key_count = old.name, None, "NORMAL", key_count
        new.aggregations, new.properties = dict(old.aggregations), dict(old.properties)
        if table.base_index_id == old.index_id:
            table.base_index_id = new.index_id
        remove_index(cat, table, old.index_id)
    base = table.indexes[table.base_index_id]
    table.indexes = {base.index_id: base, **{k: v for k, v in table.indexes.items()
                                              if k != base.index_id}}
    schema = dict(job.new_schema)
    schema["indexes"] = {}  # the rollups' new column lists came with their new indexes
    apply_schema(cat, table, schema)
    update_tablet_schemas(cat, table)


def show_rows(cat: Catalog, db: str | None) -> list[tuple]:
    """SHOW ALTER TABLE COLUMN: one row per schema change job of the database."""
    with cat.lock:
        jobs = [j for j in rollup_job.jobs_of_db(cat, cat.get_db(db)) if j.kind == KIND]
        rows = []
        for j in jobs:
            version = sum(1 for k in jobs if k.table_id == j.table_id and k.job_id <= j.job_id)
            rows.append((j.job_id, j.table_name, format_time(j.create_time),
                         format_time(j.finish_time), j.base_index_name, j.index_id,
                         j.base_index_id, f"{version}:0", j.txn_id, j.state, j.msg,
                         f"{j.done_tablets}/{j.total_tablets}"
                         if j.state == rollup_job.RUNNING else "NULL", j.timeout_s))
        return rows
