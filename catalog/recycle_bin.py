"""The catalog recycle bin (Doris's CatalogRecycleBin): what DROP without FORCE keeps.

`DROP DATABASE`, `DROP TABLE` and `ALTER TABLE ... DROP PARTITION` without FORCE (and the
dynamic partition scheduler's drops, which Doris makes without FORCE "for safe reason") move the
object here instead of erasing it; its tablets stay on disk, as they were at drop time.

    RecycleBin
      ├─ databases:  {db_id: RecycledDatabase(db with no tables, table_names, table_ids, time)}
      ├─ tables:     {table_id: RecycledTable(db_id, table, time)}  (a dropped db's tables too)
      └─ partitions: {partition_id: RecycledPartition(db_id, table_id, table_name, partition,
                                                      time)}

A dropped database's tables go to `tables` with the database's time, as Doris recycles each
table before the database. An object is erased (tablets deleted, colocation membership ended)
by `DROP CATALOG RECYCLE BIN`, by a newer same-named drop beyond `max_same_name_catalog_trash_num`,
or once it has been in the bin longer than `catalog_trash_expire_second` and Doris's
`minEraseLatency` (10 minutes): `expired()` says which, the catalog journals one
`erase_recycled` entry (catalog/recycle_ops.py). Everything here is plain data, journaled and
kept in the image through `to_dict` / `from_dict`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Iterator

from catalog.model import Database, OlapTable, Partition

MIN_ERASE_LATENCY_S = 600  # CatalogRecycleBin.minEraseLatency: never erased sooner


@dataclass
class RecycledDatabase:
    db: Database  # its tables are in RecycleBin.tables
    table_names: list[str]
    table_ids: list[int]
    time: float

    def to_dict(self) -> dict:
        return {"db": self.db.to_dict(), "table_names": self.table_names,
                "table_ids": self.table_ids, "time": self.time}

    @staticmethod
    def from_dict(d: dict) -> RecycledDatabase:
        return RecycledDatabase(Database.from_dict(d["db"]), list(d["table_names"]),
                                [int(i) for i in d["table_ids"]], d["time"])


@dataclass
class RecycledTable:
    db_id: int
    table: OlapTable
    time: float

    def to_dict(self) -> dict:
        return {"db_id": self.db_id, "table": self.table.to_dict(), "time": self.time}

    @staticmethod
    def from_dict(d: dict) -> RecycledTable:
        return RecycledTable(d["db_id"], OlapTable.from_dict(d["table"]), d["time"])


@dataclass
class RecycledPartition:
    db_id: int
    table_id: int
    table_name: str
    partition: Partition
    time: float

    def to_dict(self) -> dict:
        return {"db_id": self.db_id, "table_id": self.table_id, "table_name": self.table_name,
                "partition": self.partition.to_dict(), "time": self.time}

    @staticmethod
    def from_dict(d: dict) -> RecycledPartition:
        return RecycledPartition(d["db_id"], d["table_id"], d["table_name"],
                                 Partition.from_dict(d["partition"]), d["time"])


@dataclass
class Erasure:
    """What one `erase_recycled` entry removes."""

    databases: list[int] = field(default_factory=list)
    tables: list[int] = field(default_factory=list)
    partitions: list[int] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.databases or self.tables or self.partitions)

    def to_dict(self) -> dict:
        return {"databases": self.databases, "tables": self.tables,
                "partitions": self.partitions}


@dataclass
class RecycleBin:
    databases: dict[int, RecycledDatabase] = field(default_factory=dict)
    tables: dict[int, RecycledTable] = field(default_factory=dict)
    partitions: dict[int, RecycledPartition] = field(default_factory=dict)

    # -- persistence -----------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {"databases": [d.to_dict() for d in self.databases.values()],
                "tables": [t.to_dict() for t in self.tables.values()],
                "partitions": [p.to_dict() for p in self.partitions.values()]}

    @staticmethod
    def from_dict(d: dict | None) -> RecycleBin:
        bin_ = RecycleBin()
        for x in (d or {}).get("databases", []):
            r = RecycledDatabase.from_dict(x)
            bin_.databases[r.db.db_id] = r
        for x in (d or {}).get("tables", []):
            r = RecycledTable.from_dict(x)
            bin_.tables[r.table.table_id] = r
        for x in (d or {}).get("partitions", []):
            r = RecycledPartition.from_dict(x)
            bin_.partitions[r.partition.partition_id] = r
        return bin_

    # -- lookups ---------------------------------------------------------------------------------
    def latest_database(self, name: str, db_id: int = -1) -> RecycledDatabase | None:
        found = [r for r in self.databases.values() if r.db.name == name
                 and (db_id == -1 or r.db.db_id == db_id)]
        return max(found, key=lambda r: r.time, default=None)

    def latest_table(self, db_id: int, name: str, table_id: int = -1) -> RecycledTable | None:
        found = [r for r in self.tables.values() if r.db_id == db_id and r.table.name == name
                 and (table_id == -1 or r.table.table_id == table_id)]
        return max(found, key=lambda r: r.time, default=None)

    def latest_partition(self, table_id: int, name: str,
                         partition_id: int = -1) -> RecycledPartition | None:
        found = [r for r in self.partitions.values() if r.table_id == table_id
                 and r.partition.name.lower() == name.lower()
                 and (partition_id == -1 or r.partition.partition_id == partition_id)]
        return max(found, key=lambda r: r.time, default=None)

    def tablets(self) -> Iterator[tuple[OlapTable | None, Partition]]:
        """Every recycled partition with the table it belongs to (None: a recycled partition
        whose table is gone, which cannot happen while erasure goes partition -> table)."""
        for r in self.tables.values():
            for p in r.table.all_partitions():
                yield r.table, p
        for r in self.partitions.values():
            yield None, r.partition

    # -- erasure ---------------------------------------------------------------------------------
    def erase_instantly(self, kind: str, object_id: int) -> Erasure:
        """DROP CATALOG RECYCLE BIN WHERE 'DbId' | 'TableId' | 'PartitionId' = id: the object
        and what the bin holds under it (a database's tables and partitions, a table's
        partitions), even when the object itself is not in the bin (Doris #35750)."""
        out = Erasure()
        if kind == "DbId":
            out.databases = [object_id] if object_id in self.databases else []
            out.tables = [t for t, r in self.tables.items() if r.db_id == object_id]
            out.partitions = [p for p, r in self.partitions.items() if r.db_id == object_id]
        elif kind == "TableId":
            out.tables = [object_id] if object_id in self.tables else []
            out.partitions = [p for p, r in self.partitions.items() if r.table_id == object_id]
        else:
            out.partitions = [object_id] if object_id in self.partitions else []
        return out

    def expired(self, now: float, expire_s: int, keep_num: int) -> Erasure:
        """What the recycle bin daemon erases at `now` (runAfterCatalogReady): objects older
        than both `expire_s` and the minimum latency, then, per name, all but the `keep_num`
        newest of those older than the minimum latency (keep_num < 0: no limit)."""
        def expired(t: float) -> bool:
            age = now - t
            return age > MIN_ERASE_LATENCY_S and age > expire_s

        def excess(items: dict, key) -> list[int]:
            if keep_num < 0:
                return []
            groups: dict[tuple, list[tuple[float, int]]] = {}
            for object_id, r in items.items():
                groups.setdefault(key(r), []).append((r.time, object_id))
            out = []
            for entries in groups.values():
                entries.sort(reverse=True)
                out += [i for t, i in entries[keep_num:] if now - t > MIN_ERASE_LATENCY_S]
            return out

        out = Erasure()
        out.partitions = [i for i, r in self.partitions.items() if expired(r.time)]
        out.partitions += [i for i in excess(self.partitions, lambda r: (
            r.db_id, r.table_id, r.partition.name)) if i not in out.partitions]
        out.tables = [i for i, r in self.tables.items() if expired(r.time)]
        out.tables += [i for i in excess(self.tables, lambda r: (r.db_id, r.table.name))
                       if i not in out.tables]
        out.databases = [i for i, r in self.databases.items() if expired(r.time)]
        out.databases += [i for i in excess(self.databases, lambda r: (r.db.name,))
                          if i not in out.databases]
        for db_id in out.databases:  # a database goes with the tables it was dropped with
            out.tables += [t for t in self.databases[db_id].table_ids
                           if t in self.tables and t not in out.tables]
        return out

    # -- SHOW CATALOG RECYCLE BIN ----------------------------------------------------------------
    def info_rows(self) -> list[tuple]:
        """(Type, Name, DbId, TableId, PartitionId, DropTime, DataSize, RemoteDataSize): the
        databases, then the tables, then the partitions, each sorted by name and drop time."""
        def size_of_table(t: OlapTable) -> int:
            return sum(m.data_size() for p in t.all_partitions() for m in p.tablets.values())

        def size_of_partition(p: Partition) -> int:
            return sum(m.data_size() for m in p.tablets.values())

        dbs, tables, parts = [], [], []
        for r in self.tables.values():
            tables.append(("Table", r.table.name, r.db_id, r.table.table_id, "", r.time,
                           size_of_table(r.table)))
        for r in self.partitions.values():
            parts.append(("Partition", r.partition.name, r.db_id, r.table_id,
                          r.partition.partition_id, r.time, size_of_partition(r.partition)))
        for r in self.databases.values():
            size = sum(row[6] for row in tables + parts if row[2] == r.db.db_id)
            dbs.append(("Database", r.db.name, r.db.db_id, "", "", r.time, size))
        rows = []
        for group in (dbs, tables, parts):
            for row in sorted(group, key=lambda x: (x[1], x[5])):
                rows.append((*row[:5], drop_time(row[5]), row[6], 0))
        return rows


def drop_time(t: float) -> str:
    """TimeUtils.longToTimeString: local time, to the second."""
    return datetime.fromtimestamp(t).strftime("%Y-%m-%d %H:%M:%S")
