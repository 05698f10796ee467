"""Heavy schema change as Doris's SchemaChangeJobV2, run by the ADD ROLLUP job machinery.

A change that alters how rows are stored (a key column added or dropped, a column's type
changed, columns reordered) rewrites the base index into new tablets:

 1. `create_job` (under the table's load lock): a SHADOW index `__doris_shadow_<table>` with the
    new column definitions (`MaterializedIndexMeta.schema`) and a tablet per bucket of every
    partition, journaled with the partitions' visible versions as the watershed
    (`rollup_job_create`, kind SCHEMA_CHANGE, the table's new schema in the job). Loads from
    then on write the shadow index too, their rows converted (catalog/index_rows.py: columns
    cast to the new types, new columns filled with their DEFAULT); queries keep reading the
    old index.
 2. The job's thread (catalog/rollup_job.py:run_job) reads each old tablet at the watershed,
    converts its rows the same way and writes them into the shadow tablet.
 3. `rollup_job_finish` publishes them and `swap` makes the shadow index the base: the table
    gets its new schema, the old index and its tablets go, all in that one journal entry.

CANCEL ALTER TABLE COLUMN, a timeout or a failure drop the shadow index (`rollup_job_cancel`);
a restart resumes a RUNNING job. Not done here (refused with a message): heavy changes of a
rollup or materialized view's own columns, and tables with temporary partitions (as Doris).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from catalog import rollup_job
from catalog.errors import DdlError
from catalog.index_journal import update_tablet_schemas
from catalog.model import MaterializedIndexMeta, OlapTable
from catalog.rollup_ddl import format_time
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
               properties: dict[str, str]) -> rollup_job.RollupJob:
    """Journal the job; the caller holds the table's load lock and cat.lock."""
    from catalog.rollup_ddl import _timeout

    if table.temp_partitions:
        raise DdlError("Can not alter table when there are temp partitions in table")
    if plan.changed_indexes - {table.base_index_id}:
        names = sorted(table.indexes[i].name for i in plan.changed_indexes
                       if i != table.base_index_id)
        raise DdlError(f"Schema change of rollup or materialized view [{', '.join(names)}] "
                       f"columns that rewrites data is not supported by minidoris")
    for index_id, names in plan.indexes.items():
        for name, new_type in plan.type_changed.items():
            if name in names:
                raise DdlError(f"Schema change of rollup or materialized view "
                               f"[{table.indexes[index_id].name}] columns that rewrites data "
                               f"is not supported by minidoris")
    base = table.indexes[table.base_index_id]
    columns = plan.columns
    key_count = sum(c.is_key for c in columns)
    index = MaterializedIndexMeta(cat._alloc_id(), SHADOW_NAME_PREFIX + base.name,
                                  [c.name for c in columns], table.keys_type, key_count,
                                  schema=[c.to_dict() for c in columns])
    return rollup_job.create_jobs(cat, db, table, [index], table.base_index_id,
                                  _timeout(cat, properties), kind=KIND,
                                  new_schema=plan.schema())[0]


def start(cat: Catalog, job: rollup_job.RollupJob) -> None:
    rollup_job.start(cat, job)


def swap(cat: Catalog, table: OlapTable, job: rollup_job.RollupJob) -> None:
    """rollup_job_finish of a schema change job: the new index replaces the old one."""
    new = table.indexes.get(job.index_id)
    if new is None or job.base_index_id not in table.indexes:
        return  # replay of an already swapped job
    old = table.indexes[job.base_index_id]
    new.name, new.schema, new.state, new.key_count = old.name, None, "NORMAL", old.key_count
    if table.base_index_id == old.index_id:
        table.base_index_id = new.index_id
    rollup_job.remove_index(cat, table, old.index_id)
    table.indexes = {new.index_id: new, **{k: v for k, v in table.indexes.items()
                                            if k != new.index_id}}
    apply_schema(cat, table, job.new_schema)
    update_tablet_schemas(cat, table)


def show_rows(cat: Catalog, db: str | None) -> list[tuple]:
    """SHOW ALTER TABLE COLUMN: one row per schema change job of the database."""
    with cat.lock:
        db_name = cat.get_db(db).name
        jobs = sorted((j for j in cat.alter_jobs.values()
                       if j.db == db_name and j.kind == KIND), key=lambda j: j.job_id)
        rows = []
        for j in jobs:
            version = sum(1 for k in jobs if k.table_id == j.table_id and k.job_id <= j.job_id)
            rows.append((j.job_id, j.table_name, format_time(j.create_time),
                         format_time(j.finish_time), j.base_index_name, j.index_id,
                         j.base_index_id, f"{version}:0", j.txn_id, j.state, j.msg,
                         f"{j.done_tablets}/{j.total_tablets}"
                         if j.state == rollup_job.RUNNING else "NULL", j.timeout_s))
        return rows
