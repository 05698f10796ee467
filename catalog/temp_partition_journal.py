"""Journal operations of temporary partitions and table swaps (`catalog/temp_partitions.py`
checks and logs them), and the functions that apply them (entries of `catalog/catalog.py:_APPLY`;
adding and dropping temporary partitions are `add_partitions` / `drop_partitions` entries with
`"temporary": true`, applied by `catalog/partition_journal.py`).

    op                  data
    replace_partitions  {db, table, drop: [formal id], promote: [temporary id],
                         rename: {temporary id: new name}}
    replace_table       {db, table, other, swap}
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from catalog.catalog import Catalog


def apply_replace_partitions(cat: Catalog, data: dict) -> None:
    table = cat.dbs[data["db"]].tables[data["table"]]
    dropped = [table.partitions.pop(pid) for pid in data["drop"] if pid in table.partitions]
    for pid in data["promote"]:
        p = table.temp_partitions.pop(pid, None)
        if p is not None:
            p.name = data["rename"].get(str(pid), p.name)
            table.partitions[pid] = p
    if not getattr(cat, "replaying", False):
        for p in dropped:
            for tid in p.tablets:
                cat.engine.drop_tablet(tid)


def apply_replace_table(cat: Catalog, data: dict) -> None:
    from catalog.catalog import _apply_drop_table  # noqa: PLC0415 - catalog imports this module
    tables = cat.dbs[data["db"]].tables
    a, b = tables[data["table"]], tables[data["other"]]
    if not data["swap"]:
        _apply_drop_table(cat, {"db": data["db"], "name": data["table"]})
        del tables[data["other"]]
        b.name = data["table"]
        tables[b.name] = b
        _rename_base_index(b)
        return
    a.name, b.name = b.name, a.name
    tables[a.name], tables[b.name] = a, b
    _rename_base_index(a)
    _rename_base_index(b)


def _rename_base_index(table) -> None:
    """The base index carries the table's name (EXPLAIN's rollup, DESC ALL)."""
    base = table.indexes.get(table.base_index_id)
    if base is not None:
        base.name = table.name


APPLY = {
    "replace_partitions": apply_replace_partitions,
    "replace_table": apply_replace_table,
}
