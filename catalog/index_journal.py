"""Journal operations on table indexes (entries of `catalog/catalog.py:_APPLY`).

Like every apply function they are the only code that changes catalog state, run once when the
operation is logged (table_index.py) and again on replay. After the catalog changes, the
tablets get the table's new tablet schema (`Tablet.set_schema`), which deletes the side index
files of a dropped index; during replay storage is left alone and restored from the final state.

    op           data
    add_index    {db, table, index: TableIndex dict, next_id}
    drop_index   {db, table, name}
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from catalog.debug_points import debug_point
from catalog.model import OlapTable, TableIndex

if TYPE_CHECKING:
    from catalog.catalog import Catalog


def update_tablet_schemas(cat: Catalog, table: OlapTable) -> None:
    """Give every live tablet of the table its current schema (indexes, bloom filters)."""
    if getattr(cat, "replaying", False):
        return  # storage is restored from the final catalog state after replay
    for p in table.all_partitions():
        for index_id, tablet_ids in p.tablets_by_index.items():
            schema = table.tablet_schema(index_id)
            for tid in tablet_ids:
                cat.engine.get_tablet(tid).set_schema(schema)
                debug_point("tablet_schemas.partial")  # some tablets on the new schema


def apply_add_index(cat: Catalog, data: dict) -> None:
    table = cat.dbs[data["db"]].tables[data["table"]]
    index = TableIndex.from_dict(data["index"])
    if all(i.index_id != index.index_id for i in table.table_indexes):
        table.table_indexes.append(index)
    cat.next_id = max(cat.next_id, data["next_id"])
    update_tablet_schemas(cat, table)


def apply_drop_index(cat: Catalog, data: dict) -> None:
    table = cat.dbs[data["db"]].tables[data["table"]]
    table.table_indexes = [i for i in table.table_indexes if i.name != data["name"]]
    update_tablet_schemas(cat, table)


APPLY = {"add_index": apply_add_index, "drop_index": apply_drop_index}
