"""Partition and table properties changed after CREATE TABLE (Doris's Alter.modifyPartitionsProperty,
Env.modifyTableReplicaAllocation / modifyTableDefaultReplicaAllocation /
modifyDefaultDistributionBucketNum, ModifyTablePropertiesClause for compaction):

    modify_partitions(cat, db, t, names | None, props)   MODIFY PARTITION p | (...) | (*) SET:
        replication_num / replication_allocation, storage_medium (HDD | SSD), in_memory (false
        only), storage_cooldown_time; kept on each partition (SHOW PARTITIONS)
    set_replication(cat, db, t, props)   ALTER TABLE t SET ("replication_num" | "replication_
        allocation" | "default.replication_num" | "default.replication_allocation" = ...): an
        unpartitioned table's one partition and its default; a partitioned table only its
        default (for partitions added later)
    modify_distribution(cat, db, t, kind, columns, buckets)   MODIFY DISTRIBUTION: a partitioned
        table's bucket count for partitions added later
    set_compaction(cat, db, t, key, value)   compaction_policy, time_series_compaction_*

A replica count is checked as CREATE TABLE checks it (no more replicas than available
backends). More replicas are placed by the tablet scheduler (catalog/tablet_scheduler.py), as it
repairs any tablet with fewer replicas than its partition's number; fewer drop the trailing ones
at once. Every change is one journal entry (entries of `catalog/catalog.py:_APPLY`):

    op                           data
    modify_partition_properties  {table_id, partitions: {partition id: {replication_num?,
                                  storage_medium?, in_memory?, storage_cooldown_time?}},
                                  default_replication_num?}
    modify_default_buckets       {table_id, buckets, auto}
(compaction properties use partition_journal's modify_table_properties)
"""

from __future__ import annotations

from catalog.compaction_properties import check_compaction
from catalog.create_table import check_bucket_num, replication_num
from catalog.errors import AnalysisError, DdlError
from catalog.model import OlapTable

REPLICATION_KEYS = ("replication_num", "replication_allocation", "default.replication_num",
                    "default.replication_allocation")
PARTITION_KEYS = ("replication_num", "replication_allocation", "storage_medium", "in_memory",
                  "storage_cooldown_time")


def _olap_table(cat, db: str | None, name: str) -> OlapTable:
    from catalog.rollup_job import check_normal  # (rollup_job imports the catalog)
    table = cat.get_table(cat.get_db(db).name, name)
    if not isinstance(table, OlapTable):
        raise DdlError(f"Table '{name}' is not a OLAP table")
    check_normal(cat, table)
    return table


def _replicas(cat, table: OlapTable, props: dict[str, str]) -> int:
    from catalog.colocation import check_change_replication
    check_change_replication(cat, table)
    n = replication_num({k.removeprefix("default."): v for k, v in props.items()})
    cat._check_replication(n)  # noqa: SLF001 - CREATE TABLE's rule and text
    return n


def modify_partitions(cat, db: str | None, name: str, names: list[str] | None,
                      props: dict[str, str]) -> None:
    if not props:
        raise AnalysisError("Properties is not set")
    for k in props:
        if k not in PARTITION_KEYS:
            raise AnalysisError(f"Unknown properties: {{{k}={props[k]}}}")
    change: dict[str, object] = {}
    if props.get("in_memory", "false").strip().lower() == "true":
        raise AnalysisError("Not support set 'in_memory'='true' now!")
    if "storage_medium" in props:
        medium = props["storage_medium"].strip().upper()
        if medium not in ("HDD", "SSD"):
            raise AnalysisError(f"Invalid storage medium: {props['storage_medium']}")
        change["storage_medium"] = medium
    if "storage_cooldown_time" in props:
        change["storage_cooldown_time"] = props["storage_cooldown_time"]
    with cat.lock:
        table = _olap_table(cat, db, name)
        parts = list(table.partitions.values()) if names is None else table.partitions_named(
            names, lambda n: DdlError(f"Partition[{n}] does not exist in table[{table.name}]"))
        if "replication_num" in props or "replication_allocation" in props:
            change["replication_num"] = _replicas(cat, table, props)
        entry = {"table_id": table.table_id,
                 "partitions": {str(p.partition_id): change for p in parts}}
        cat._log("modify_partition_properties", entry)  # noqa: SLF001


def set_replication(cat, db: str | None, name: str, props: dict[str, str]) -> None:
    with cat.lock:
        table = _olap_table(cat, db, name)
        n = _replicas(cat, table, props)
        default_only = all(k.startswith("default.") for k in props)
        entry: dict = {"table_id": table.table_id, "partitions": {},
                       "default_replication_num": n}
        if not default_only:
            if table.partition_info.kind != "UNPARTITIONED":
                raise DdlError(
                    "This is a partitioned table, you should specify partitions with MODIFY "
                    "PARTITION clause. If you want to set default replication number, please use "
                    "'default.replication_num' instead of 'replication_num' to escape misleading.")
            entry["partitions"] = {str(p.partition_id): {"replication_num": n}
                                   for p in table.partitions.values()}
        cat._log("modify_partition_properties", entry)  # noqa: SLF001


def modify_distribution(cat, db: str | None, name: str, kind: str, columns: list[str],
                        buckets: int | None) -> None:
    with cat.lock:
        table = _olap_table(cat, db, name)
        if cat.colocation.of_table(table.table_id) is not None:
            raise DdlError("Cannot change default bucket number of colocate table.")
        if table.partition_info.kind == "UNPARTITIONED":
            raise DdlError("Only support change partitioned table's distribution.")
        default = table.distribution
        if kind != default.kind:
            raise DdlError("Cannot change distribution type when modify default distribution "
                           "bucket num")
        if kind == "HASH" and [c.lower() for c in columns] != \
                [c.lower() for c in default.columns]:
            raise DdlError("Cannot assign hash distribution with different distribution cols. "
                           f"new is: [{', '.join(columns)}] default is: "
                           f"[{', '.join(default.columns)}]")
        if buckets is not None and buckets <= 0:
            raise DdlError("Cannot assign hash distribution buckets less than 1")
        count = default.buckets if buckets is None else check_bucket_num(buckets)
        cat._log("modify_default_buckets", {"table_id": table.table_id,  # noqa: SLF001
                                            "buckets": count, "auto": buckets is None})


def set_compaction(cat, db: str | None, name: str, key: str, value: str) -> None:
    value = check_compaction(key, value)
    with cat.lock:
        table = _olap_table(cat, db, name)
        db_name = cat.get_db(db).name
        if table.properties.get(key) == value:
            return
        cat._log("modify_table_properties", {"db": db_name, "table": table.name,  # noqa: SLF001
                                             "set": {key: value}})


def _apply_modify(cat, data: dict) -> None:
    _, table = cat.find_table_by_id(data["table_id"])
    for pid, change in data["partitions"].items():
        p = next((q for q in table.all_partitions() if q.partition_id == int(pid)), None)
        if p is None:
            continue
        for k, v in change.items():
            if k == "replication_num":
                p.replication_num = v
                for meta in p.tablets.values():
                    del meta.replicas[v:]  # fewer: the trailing ones go; more: the scheduler
            else:
                p.properties[k] = v
    if "default_replication_num" in data:
        table.properties["replication_num"] = str(data["default_replication_num"])
        table.properties.pop("replication_allocation", None)  # the number stands for it


def _apply_default_buckets(cat, data: dict) -> None:
    _, table = cat.find_table_by_id(data["table_id"])
    table.distribution.buckets = data["buckets"]
    table.distribution.auto_buckets = data["auto"]


APPLY = {"modify_partition_properties": _apply_modify,
         "modify_default_buckets": _apply_default_buckets}
