"""Renaming tables and partitions: ALTER TABLE t RENAME n, ALTER TABLE t RENAME PARTITION p
n. Journal operations (entries of `catalog/catalog.py:_APPLY`):

    op                data
    rename_table      {db, name, new_name}
    rename_partition  {db, table, partition_id, new_name}

Tablets are keyed by id, so only the catalog's names change. `ALTER TABLE a REPLACE WITH TABLE
b` (dbt swaps a model's new table in this way) is catalog/temp_partitions.py:replace_table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from catalog.errors import DdlError
from catalog.model import OlapTable
from catalog.names import check_partition_name, check_table_name

if TYPE_CHECKING:
    from catalog.catalog import Catalog


def rename_table(cat: Catalog, db_name: str | None, name: str, new_name: str) -> None:
    """Doris's Env.renameTable: the table not under an ALTER job (a rollup job building
    under the old name, or a schema change, would publish into a renamed table), a new name
    that differs, is free among the database's tables and views, and is not one of the
    table's rollup or materialized view names (OlapTable.checkAndSetName)."""
    from catalog.rollup_job import check_normal  # (rollup_job imports the catalog)
    with cat.lock:
        db = cat.get_db(db_name)
        table = cat.get_table(db.name, name)
        if isinstance(table, OlapTable):
            check_normal(cat, table)
        if new_name == table.name:
            raise DdlError("Same table name")
        check_table_name(new_name)
        if new_name in db.tables or new_name in db.views:
            raise DdlError(f"Table name[{new_name}] is already used")
        if isinstance(table, OlapTable):
            for index in table.indexes.values():
                if index.name == new_name:
                    raise DdlError(f"New name conflicts with rollup index name: {new_name}")
        cat._log("rename_table", {"db": db.name, "name": name, "new_name": new_name})  # noqa: SLF001


def rename_partition(cat: Catalog, db_name: str | None, table_name: str, name: str,
                     new_name: str) -> None:
    """Doris's Env.renamePartition: a RANGE or LIST table not under an ALTER job, the
    partition found by name (case-insensitively), the new name free among its partitions and
    temporary partitions."""
    from catalog.rollup_job import check_normal  # (rollup_job imports the catalog)
    with cat.lock:
        db = cat.get_db(db_name)
        table = cat.get_table(db.name, table_name)
        if not isinstance(table, OlapTable):
            raise DdlError(f"Table[{table_name}] is not OLAP table")
        check_normal(cat, table)
        if table.partition_info.kind not in ("RANGE", "LIST"):
            raise DdlError(f"Table[{table.name}] is single partitioned. no need to rename "
                           "partition name.")
        if name.lower() == new_name.lower():
            raise DdlError("Same partition name")
        partition = table.partition_by_name(name)
        if partition is None:
            raise DdlError(f"Partition[{name}] does not exists")
        check_partition_name(new_name)
        low = new_name.lower()
        if any(p.name.lower() == low for p in table.all_partitions()):
            raise DdlError(f"Partition name[{new_name}] is already used")
        cat._log("rename_partition", {"db": db.name, "table": table.name,  # noqa: SLF001
                                      "partition_id": partition.partition_id,
                                      "new_name": new_name})


def _apply_rename_partition(cat: Catalog, data: dict) -> None:
    table = cat.dbs[data["db"]].tables[data["table"]]
    table.partitions[data["partition_id"]].name = data["new_name"]


def _apply_rename(cat: Catalog, data: dict) -> None:
    tables = cat.dbs[data["db"]].tables
    table = tables.pop(data["name"])
    table.name = data["new_name"]
    tables[table.name] = table
    base = table.indexes.get(table.base_index_id)
    if base is not None:
        base.name = table.name  # the base index carries the table's name (EXPLAIN, DESC ALL)


APPLY = {"rename_table": _apply_rename, "rename_partition": _apply_rename_partition}
