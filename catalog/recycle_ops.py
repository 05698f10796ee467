"""Recycle bin operations: moving dropped objects in, RECOVER, and erasure.

The statements (`recover_database`, `recover_table`, `recover_partition`, `erase_instantly`,
`erase_expired`) check Doris's rules (InternalCatalog.recover*, CatalogRecycleBin) under the
catalog lock and journal one entry each; the apply functions below are the only code that
changes the bin, run when the entry is logged and again on replay:

    op                  data
    drop_db             {name, [recycle, time]}           (catalog.py: recycle_database here)
    drop_table          {db, name, [recycle, time]}       (catalog.py: recycle_table here)
    drop_partitions     {db, table, partition_ids, [recycle, time]} (partition_journal.py)
    recover_db          {db_id, [new_name]}
    recover_table       {db, table_id, [new_name]}
    recover_partition   {db, table, partition_id, [new_name]}
    erase_recycled      {databases: [id], tables: [id], partitions: [id]}

Erasure deletes the tablets' files (not during replay: start-up restores the tablets of what
is still in the bin and removes the rest) and ends a table's colocation group membership, which
Doris keeps while the table is in the bin (Env.onEraseOlapTable).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from catalog import colocation
from catalog.errors import DdlError, TableExists, UnknownTableToDrop
from catalog.model import Database, OlapTable, Partition
from catalog.partitions import check_list_values, check_range, partition_types
from catalog.recycle_bin import (Erasure, RecycledDatabase, RecycledPartition, RecycledTable)

if TYPE_CHECKING:
    from catalog.catalog import Catalog


# -- moving in (called by the drop apply functions) --------------------------------------------
def _storage(cat: Catalog) -> bool:
    return not getattr(cat, "replaying", False)


def recycle_table(cat: Catalog, db_id: int, table: OlapTable, time: float) -> None:
    """The table goes to the bin whole; its temporary partitions are erased first, as Doris's
    unprotectDropTable does (no temporary partitions in the bin)."""
    if _storage(cat):
        for p in table.temp_partitions.values():
            for tid in p.tablets:
                cat.engine.drop_tablet(tid)
    table.temp_partitions.clear()
    cat.recycle_bin.tables[table.table_id] = RecycledTable(db_id, table, time)


def recycle_database(cat: Catalog, db: Database, time: float) -> None:
    tables = list(db.tables.values())
    for table in tables:
        recycle_table(cat, db.db_id, table, time)
    db.tables = {}
    cat.recycle_bin.databases[db.db_id] = RecycledDatabase(
        db, [t.name for t in tables], [t.table_id for t in tables], time)


def recycle_partition(cat: Catalog, db_id: int, table: OlapTable, p: Partition,
                      time: float) -> None:
    cat.recycle_bin.partitions[p.partition_id] = RecycledPartition(
        db_id, table.table_id, table.name, p, time)


# -- RECOVER -----------------------------------------------------------------------------------
def recover_database(cat: Catalog, name: str, db_id: int = -1, new_name: str | None = None) -> None:
    with cat.lock:
        target = new_name or name
        if target in cat.dbs:
            raise DdlError(f"Database[{target}] already exist.")
        r = cat.recycle_bin.latest_database(name, db_id)
        if r is None:
            raise DdlError(f"Unknown database '{name}' or database id '{db_id}'")
        missing = [n for n, i in zip(r.table_names, r.table_ids) if i not in cat.recycle_bin.tables]
        if missing:
            raise DdlError(f"Tables[[{', '.join(missing)}]] is missing. Can not recover db")
        data = {"db_id": r.db.db_id}
        if new_name:
            data["new_name"] = new_name
        cat._log("recover_db", data)  # noqa: SLF001


def recover_table(cat: Catalog, db_name: str | None, name: str, table_id: int = -1,
                  new_name: str | None = None) -> None:
    with cat.lock:
        db = cat.get_db(db_name)
        target = new_name or name
        if target in db.tables or target in db.views:
            raise TableExists(target)
        r = cat.recycle_bin.latest_table(db.db_id, name, table_id)
        if r is None:
            raise DdlError(f"Unknown table '{name}' or table id '{table_id}' in {db.name}")
        data = {"db": db.name, "table_id": r.table.table_id}
        if new_name:
            data["new_name"] = new_name
        cat._log("recover_table", data)  # noqa: SLF001


def recover_partition(cat: Catalog, db_name: str | None, table_name: str, name: str,
                      partition_id: int = -1, new_name: str | None = None) -> None:
    from catalog.load import table_lock  # noqa: PLC0415 - load imports the catalog package

    with cat.lock:
        db = cat.get_db(db_name)
        if table_name not in db.tables:
            raise UnknownTableToDrop(table_name, db.name)
        table_id = db.tables[table_name].table_id
    with table_lock(table_id), cat.lock:  # a load's order: the table's lock, then the catalog's
        table = cat.get_table(db.name, table_name)
        target = new_name or name
        if table.partition_by_name(target) is not None:
            raise DdlError(f"partition[{target}] already exist in table[{table_name}]")
        r = cat.recycle_bin.latest_partition(table.table_id, name, partition_id)
        if r is None:
            raise DdlError(f"No partition named '{name}' or partition id '{partition_id}' in "
                           f"table {table_name}")
        _check_recoverable(table, r.partition, name)
        data = {"db": db.name, "table": table.name, "partition_id": r.partition.partition_id}
        if new_name:
            data["new_name"] = new_name
        cat._log("recover_partition", data)  # noqa: SLF001


def _check_recoverable(table: OlapTable, p: Partition, name: str) -> None:
    """Its key range or values must not meet a current partition's; its tablets must be of the
    table's current indexes (a heavy schema change since the drop replaced them)."""
    conflict = f"Can not recover partition[{name}]. Partition item conflict."
    types = partition_types(table)
    existing = list(table.partitions.values())
    try:
        if table.partition_info.kind == "RANGE":
            check_range(types, name, p.lower, p.upper, existing)
        elif table.partition_info.kind == "LIST":
            check_list_values(types, p.values, existing)
    except DdlError:
        raise DdlError(conflict) from None
    if set(p.tablets_by_index) != set(table.indexes):
        raise DdlError(f"Can not recover partition[{name}]. The table's indexes changed since "
                       f"it was dropped")


# -- erasure -----------------------------------------------------------------------------------
ID_TYPES = {"dbid": "DbId", "tableid": "TableId", "partitionid": "PartitionId"}


def erase_instantly(cat: Catalog, kind: str, object_id: int) -> None:
    """DROP CATALOG RECYCLE BIN WHERE '<kind>' = id: Doris's errors when nothing is erased."""
    with cat.lock:
        erasure = cat.recycle_bin.erase_instantly(kind, object_id)
        if not erasure:
            raise DdlError({"DbId": f"Unknown database id '{object_id}'",
                            "TableId": f"Unknown table id '{object_id}'",
                            "PartitionId": f"No partition id '{object_id}'"}[kind])
        cat._log("erase_recycled", erasure.to_dict())  # noqa: SLF001


def erase_expired(cat: Catalog, now: float, expire_s: int, keep_num: int) -> Erasure:
    """One pass of the recycle bin daemon; what it erased."""
    with cat.lock:
        erasure = cat.recycle_bin.expired(now, expire_s, keep_num)
        if erasure:
            cat._log("erase_recycled", erasure.to_dict())  # noqa: SLF001
        return erasure


# -- apply functions ---------------------------------------------------------------------------
def _rename_table(table: OlapTable, new_name: str) -> None:
    table.name = new_name
    base = table.indexes.get(table.base_index_id)
    if base is not None:
        base.name = new_name  # the base index carries the table's name (catalog/rename.py)


def _rejoin_group(cat: Catalog, table: OlapTable) -> None:
    """A recovered colocated table is still a member of its group (kept while in the bin);
    buckets whose replicas no longer sit on the group's sequence are pending, for the tablet
    scheduler to move, as when a table joins a group."""
    g = cat.colocation.of_table(table.table_id)
    if g is not None:
        g.pending |= colocation.mismatched_buckets(table, g.seq)


def apply_recover_db(cat: Catalog, data: dict) -> None:
    r = cat.recycle_bin.databases.pop(data["db_id"])
    db = r.db
    if data.get("new_name"):
        db.name = data["new_name"]
    for table_id in r.table_ids:
        t = cat.recycle_bin.tables.pop(table_id)
        db.tables[t.table.name] = t.table
        _rejoin_group(cat, t.table)
    cat.dbs[db.name] = db


def apply_recover_table(cat: Catalog, data: dict) -> None:
    db = cat.dbs[data["db"]]
    table = cat.recycle_bin.tables.pop(data["table_id"]).table
    if data.get("new_name"):
        _rename_table(table, data["new_name"])
    db.tables[table.name] = table
    _rejoin_group(cat, table)


def apply_recover_partition(cat: Catalog, data: dict) -> None:
    table = cat.dbs[data["db"]].tables[data["table"]]
    p = cat.recycle_bin.partitions.pop(data["partition_id"]).partition
    if data.get("new_name"):
        p.name = data["new_name"]
    table.partitions[p.partition_id] = p
    _rejoin_group(cat, table)


def apply_erase_recycled(cat: Catalog, data: dict) -> None:
    bin_ = cat.recycle_bin
    doomed: list[Partition] = []
    for pid in data["partitions"]:
        r = bin_.partitions.pop(pid, None)
        if r is not None:
            doomed.append(r.partition)
    for table_id in data["tables"]:
        r = bin_.tables.pop(table_id, None)
        if r is not None:
            doomed += r.table.all_partitions()
            colocation.remove_table(cat, table_id)
    for db_id in data["databases"]:
        bin_.databases.pop(db_id, None)
    if _storage(cat):
        for p in doomed:
            for tid in p.tablets:
                cat.engine.drop_tablet(tid)


APPLY = {
    "recover_db": apply_recover_db,
    "recover_table": apply_recover_table,
    "recover_partition": apply_recover_partition,
    "erase_recycled": apply_erase_recycled,
}
