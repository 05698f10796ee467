"""Partition DDL on the catalog: ADD/DROP PARTITION, TRUNCATE TABLE, dynamic partition
properties, and applying a dynamic partition plan.

Each operation checks Doris's rules, allocates ids, and journals one operation
(`catalog/partition_journal.py`) that the catalog applies. Every change to a table's partitions
holds the table's load lock (`catalog.load.table_lock`) and then the catalog lock, the order a
load takes them, so a partition is never dropped or replaced under a load that is writing into
it: the load either published before, or routes against the new partition set after. A table
under an ALTER job (its state ROLLUP or SCHEMA_CHANGE) takes none of them (`check_normal`).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from catalog.catalog import Catalog
from catalog.create_table import check_bucket_num, plan_partitions, replication_num
from catalog.dynamic_partition import DynamicPlan
from catalog.dynamic_properties import PREFIX, DynamicProperty, analyze, read
from catalog.database_alter import check_replica_quota
from catalog.errors import CodedDdlError, DdlError
from catalog.load import table_lock
from catalog.model import OlapTable, Partition
from catalog.rollup_job import check_normal
from catalog.statements import AddPartitionStmt


@contextmanager
def locked_table(cat: Catalog, db_name: str | None, table_name: str) -> Iterator[OlapTable]:
    """The table, with its load lock and the catalog lock held (in that order)."""
    with cat.lock:
        table = cat.get_table(db_name, table_name)
    with table_lock(table.table_id):
        with cat.lock:
            yield cat.get_table(db_name, table_name)


def is_dynamic(table: OlapTable) -> bool:
    prop = read(table.properties)
    return prop is not None and prop.enable


def check_alter_allowed(table: OlapTable) -> None:
    if is_dynamic(table):
        raise DdlError("Cannot add/drop partition on a Dynamic Partition Table, Use command "
                       f"`ALTER TABLE {table.name} SET (\"dynamic_partition.enable\" = \"false\")`"
                       " firstly.")


# -- ADD PARTITION ------------------------------------------------------------------------------
def add_partition(cat: Catalog, db_name: str | None, stmt: AddPartitionStmt) -> None:
    with locked_table(cat, stmt.db or db_name, stmt.table) as table:
        check_normal(cat, table)  # Alter.processAlterOlapTable's first check
        check_alter_allowed(table)
        if table.partition_info.kind not in ("RANGE", "LIST"):
            raise DdlError("Only support adding partition to range and list partitioned table")
        desc = stmt.partition
        if table.partition_by_name(desc.name) is not None:
            if desc.if_not_exists:
                return
            raise CodedDdlError(f"Duplicate partition name {desc.name}", 1517, "HY000")
        buckets = _buckets(table, stmt)
        replicas = _replicas(cat, table, desc.properties)
        existing = list(table.partitions.values())
        [(name, lower, upper, values)] = plan_partitions(table, [desc], existing)
        p = cat.new_partition(table, name, lower, upper, values, buckets, replicas)
        db = cat.get_db(db_of(cat, table))
        check_replica_quota(cat, db, sum(len(m.replicas) for m in p.tablets.values()))
        cat._log("add_partitions", {"db": db.name, "table": table.name,
                                    "partitions": [p.to_dict()], "next_id": cat.next_id})


def _buckets(table: OlapTable, stmt: AddPartitionStmt) -> int:
    """The new partition's bucket count: its own DISTRIBUTED BY may change only the count."""
    default = table.distribution
    if stmt.distribution_kind is None:
        return default.buckets
    if stmt.distribution_kind != default.kind:
        raise DdlError(f"Cannot assign different distribution type. default is: {default.kind}")
    if default.kind == "HASH":
        given = [c.lower() for c in stmt.distribution_columns]
        if given != [c.lower() for c in default.columns]:
            raise DdlError("Cannot assign hash distribution with different distribution cols. "
                           f"default is: [{', '.join(default.columns)}]")
    if stmt.buckets is None:
        return default.buckets
    if stmt.buckets <= 0:
        raise DdlError("Cannot assign hash distribution buckets less than 1")
    return check_bucket_num(stmt.buckets)


def _replicas(cat: Catalog, table: OlapTable, properties: dict[str, str]) -> int:
    if "replication_num" in properties or "replication_allocation" in properties:
        n = replication_num(properties)
    else:
        n = int(table.properties.get("replication_num", "3"))
    cat._check_replication(n)
    return n


def db_of(cat: Catalog, table: OlapTable) -> str:
    """The name of the database holding `table`."""
    return next(db.name for db in cat.dbs.values() if db.tables.get(table.name) is table)


# -- DROP PARTITION -----------------------------------------------------------------------------
def drop_partition(cat: Catalog, db_name: str | None, table_name: str, name: str,
                   if_exists: bool = False, force: bool = False) -> None:
    """DROP PARTITION [IF EXISTS] p [FORCE]: without FORCE the partition goes to the recycle
    bin (RECOVER PARTITION); with it its tablets leave the disk once the drop is journaled."""
    with locked_table(cat, db_name, table_name) as table:
        check_normal(cat, table)
        check_alter_allowed(table)
        p = table.partition_by_name(name)
        if p is None:
            if if_exists:
                return
            raise CodedDdlError(f"Error in list of partitions to {name}", 1507, "HY000")
        if table.partition_info.kind not in ("RANGE", "LIST"):
            raise DdlError(f"Alter table [{table.name}] failed. Not a partitioned table")
        drop_partitions(cat, table, [p], recycle=not force)


def drop_partitions(cat: Catalog, table: OlapTable, parts: list[Partition],
                    recycle: bool) -> None:
    """Journal the drop of `parts` (caller holds the locks); `recycle`: into the recycle bin."""
    if parts:
        data = {"db": db_of(cat, table), "table": table.name,
                "partition_ids": [p.partition_id for p in parts]}
        if recycle:
            data.update(recycle=True, time=cat.clock())
        cat._log("drop_partitions", data)


# -- TRUNCATE -----------------------------------------------------------------------------------
def truncate(cat: Catalog, db_name: str | None, table_name: str,
             partition_names: list[str] | None) -> None:
    """Replace the named partitions (all without names) by empty ones: same names, ranges,
    buckets and replicas, new ids and tablets; the old tablets' files are deleted."""
    with locked_table(cat, db_name, table_name) as table:
        check_normal(cat, table)  # InternalCatalog.truncateTable
        if partition_names:
            parts = table.partitions_named(
                partition_names, lambda name: DdlError(f"Partition {name} does not exist"))
        else:
            parts = table.sorted_partitions()
        replace = [{"old": p.partition_id,
                    "partition": cat.new_partition(table, p.name, p.lower, p.upper, p.values,
                                                   p.buckets, p.replication_num).to_dict()}
                   for p in parts]
        cat._log("truncate", {"db": db_of(cat, table), "table": table.name,
                              "replace": replace, "next_id": cat.next_id})


# -- dynamic partitions -------------------------------------------------------------------------
def set_dynamic_properties(cat: Catalog, db_name: str | None, table_name: str,
                           given: dict[str, str], max_partitions: int) -> DynamicProperty:
    """ALTER TABLE t SET ("dynamic_partition.x" = ...): merge, check, journal; the new rule."""
    with locked_table(cat, db_name, table_name) as table:
        check_normal(cat, table)
        new = analyze(table, given, len(cat.available_backends()), max_partitions)
        old = [k for k in table.properties if k.startswith(PREFIX) and k not in new]
        cat._log("modify_table_properties", {"db": db_of(cat, table), "table": table.name,
                                             "set": new, "remove": old})
        return read(table.properties)


def apply_plan(cat: Catalog, table: OlapTable, prop: DynamicProperty, plan: DynamicPlan) -> None:
    """Drop, then add, what a dynamic partition plan says (caller holds the locks). The drops
    go to the recycle bin: Doris's DynamicPartitionScheduler drops without FORCE "for safe
    reason"."""
    drop_partitions(cat, table, [table.partition_by_name(n) for n in plan.drop], recycle=True)
    if not plan.add:
        return
    replicas = prop.replication_num or int(table.properties.get("replication_num", "3"))
    cat._check_replication(replicas)
    parts = [cat.new_partition(table, n.name, [n.lower], [n.upper], None, prop.buckets, replicas)
             for n in plan.add]
    cat._log("add_partitions", {"db": db_of(cat, table), "table": table.name,
                                "partitions": [p.to_dict() for p in parts],
                                "next_id": cat.next_id})
