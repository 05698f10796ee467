"""Journal operations on partitions and table properties, and the functions that apply them.

These are entries of `catalog/catalog.py:_APPLY`; like every apply function they are the only
code that changes catalog state, run once when the operation is logged and again on replay.
Storage follows after the entry is durable: tablets of new partitions are created, tablets of
dropped or truncated partitions are dropped (their files deleted). During replay storage is
left alone (`Catalog.replaying`): the catalog restores tablets once from its final state.

    op                        data
    add_partitions            {db, table, partitions: [Partition dict], next_id, [temporary]}
    drop_partitions           {db, table, partition_ids: [id], [temporary], [recycle, time]}
    truncate                  {db, table, replace: [{old: id, partition: Partition dict}], next_id}
    modify_table_properties   {db, table, set: {k: v}, remove: [k]}
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from catalog.debug_points import debug_point
from catalog.model import OlapTable, Partition

if TYPE_CHECKING:
    from catalog.catalog import Catalog


def _table(cat: Catalog, data: dict) -> OlapTable:
    return cat.dbs[data["db"]].tables[data["table"]]


def _storage(cat: Catalog) -> bool:
    return not getattr(cat, "replaying", False)


def _create_tablets(cat: Catalog, table: OlapTable, p: Partition) -> None:
    for index_id, tablet_ids in p.tablets_by_index.items():
        schema = table.tablet_schema(index_id)
        for tid in tablet_ids:
            cat.engine.create_tablet(tid, schema)


def _drop_tablets(cat: Catalog, p: Partition) -> None:
    for tid in p.tablets:
        cat.engine.drop_tablet(tid)
        debug_point("drop_tablets.partial")  # a crash with some of the files gone


def apply_add_partitions(cat: Catalog, data: dict) -> None:
    table = _table(cat, data)
    into = table.temp_partitions if data.get("temporary") else table.partitions
    for d in data["partitions"]:
        p = Partition.from_dict(d)
        into[p.partition_id] = p
        if _storage(cat):
            _create_tablets(cat, table, p)
    cat.next_id = max(cat.next_id, data["next_id"])


def apply_drop_partitions(cat: Catalog, data: dict) -> None:
    """`recycle`: the partitions go to the recycle bin with their tablets (DROP PARTITION
    without FORCE, catalog/recycle_ops.py); otherwise their tablets are dropped."""
    from catalog.recycle_ops import recycle_partition  # noqa: PLC0415 - a sibling apply module

    table = _table(cat, data)
    source = table.temp_partitions if data.get("temporary") else table.partitions
    for pid in data["partition_ids"]:
        p = source.pop(pid, None)
        if p is not None and data.get("recycle"):
            recycle_partition(cat, cat.dbs[data["db"]].db_id, table, p, data["time"])
        elif p is not None and _storage(cat):
            _drop_tablets(cat, p)


def apply_truncate(cat: Catalog, data: dict) -> None:
    """Each named partition is replaced by an empty one with the same name and key range."""
    table = _table(cat, data)
    for r in data["replace"]:
        old = table.partitions.pop(r["old"], None)
        new = Partition.from_dict(r["partition"])
        table.partitions[new.partition_id] = new
        if _storage(cat):
            _create_tablets(cat, table, new)
            if old is not None:
                _drop_tablets(cat, old)
    cat.next_id = max(cat.next_id, data["next_id"])


def apply_modify_table_properties(cat: Catalog, data: dict) -> None:
    table = _table(cat, data)
    for key in data.get("remove", []):
        table.properties.pop(key, None)
    table.properties.update(data.get("set", {}))


APPLY = {
    "add_partitions": apply_add_partitions,
    "drop_partitions": apply_drop_partitions,
    "truncate": apply_truncate,
    "modify_table_properties": apply_modify_table_properties,
}
