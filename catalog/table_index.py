"""ALTER TABLE ADD INDEX / CREATE INDEX and DROP INDEX: journaled index changes.

Adding a bitmap index to a table that holds data (Doris runs a schema change job; minidoris does
it synchronously):
 1. under the table's load lock (no load, DELETE or partition DDL runs meanwhile) and the
    catalog lock, validate (index_rules.py) and allocate the index id;
 2. every tablet of every materialized index holding the column writes side index files for
    its published segments (`Tablet.build_bitmap_index`, fsynced), outside the catalog lock;
 3. journal `add_index`; applying it adds the index to the table and gives the tablets the new
    schema, so later loads write the index inside their segments.
A crash before step 3 leaves side files no schema names: start-up removes them as orphans.
Dropping journals `drop_index`; applying it removes the index and the side files.

The journal operations and their apply functions are in index_journal.py.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING, Iterator

from catalog.errors import AnalysisError, DdlError
from catalog.index_journal import update_tablet_schemas
from catalog.index_rules import (BF_COLUMNS, BF_FPP, analyze_bloom_filter, check_index_def,
                                 check_new_index)
from catalog.load import table_lock
from catalog.load_gate import load_gate
from catalog.partition_ddl import db_of, locked_table
from catalog.rollup_job import check_normal
from catalog.model import OlapTable, TableIndex
from catalog.statements import IndexDef

if TYPE_CHECKING:
    from catalog.catalog import Catalog


def add_index(cat: Catalog, db_name: str | None, table_name: str, d: IndexDef,
              if_not_exists: bool = False) -> None:
    db, table_id = _table_ids(cat, db_name, table_name)
    with load_gate(table_id).exclusive(), table_lock(table_id):
        with cat.lock:
            table = cat.get_table(db, table_name)
            check_normal(cat, table)
            if if_not_exists and any(i.name.lower() == d.name.lower()
                                     for i in table.table_indexes):
                return
            col = check_index_def(d, table.columns, table.keys_type)
            check_new_index(d, table.table_indexes)
            index = TableIndex(cat._alloc_id(), d.name, [col.name], d.using.upper(), d.comment,
                               dict(d.properties))
            tablets = _tablets_with(table, col.name)
        if index.index_type == "BITMAP":  # INVERTED: new data only, until BUILD INDEX
            for tid in tablets:
                cat.engine.get_tablet(tid).build_bitmap_index(col.name, index.index_id)
        cat._log("add_index", {"db": db, "table": table.name, "index": index.to_dict(),
                               "next_id": cat.next_id})


def drop_index(cat: Catalog, db_name: str | None, table_name: str, name: str,
               if_exists: bool = False) -> None:
    with _index_locked(cat, db_name, table_name, name) as (db, table, index):
        if index is None:
            if if_exists:
                return
            raise DdlError(f"index {name} does not exist")
        cat._log("drop_index", {"db": db, "table": table.name, "name": index.name})


def build_index(cat: Catalog, db_name: str | None, table_name: str, name: str,
                partitions: list[str] | None = None) -> None:
    """BUILD INDEX name ON t [PARTITION (..)]: index the segments written before an INVERTED
    index was added (Doris 2.1 runs an index change job; minidoris builds synchronously,
    under the table's load lock). Each tablet writes side index files for its segments that
    lack the index; nothing is journaled (the side files are durable, fsynced)."""
    with _index_locked(cat, db_name, table_name, name, hold=False) as (db, table, index):
        if index is None:
            raise AnalysisError(f"Index[{name}] is not exist in table[{table_name}]")
        if index.index_type != "INVERTED":
            raise AnalysisError(f"BUILD INDEX operation failed: The index {index.name} of "
                                f"type {index.index_type} does not support lightweight "
                                "index changes.")
        if partitions and table.partition_info.kind == "UNPARTITIONED":
            raise AnalysisError(f"table {table.name} is not partitioned, cannot build "
                                "index with partitions.")
        for p in partitions or ():
            if table.partition_by_name(p) is None:
                raise AnalysisError(f"Partition[{p}] does not exist")
        chosen = {p.lower() for p in partitions} if partitions else None
        tablets = _tablets_with(table, index.columns[0], chosen)
        for tid in tablets:
            cat.engine.get_tablet(tid).build_inverted_index(index.columns[0], index.index_id,
                                                            dict(index.properties))


def _table_ids(cat: Catalog, db_name: str | None, table_name: str) -> tuple[str, int]:
    """(database name, table id) of a table whose indexes change; checked NORMAL before the
    caller waits for its loads."""
    with cat.lock:
        db = cat.get_db(db_name).name
        table = cat.get_table(db, table_name)
        check_normal(cat, table)
        return db, table.table_id


@contextmanager
def _index_locked(cat: Catalog, db_name: str | None, table_name: str, name: str,
                  hold: bool = True) -> Iterator[tuple[str, OlapTable, TableIndex | None]]:
    """(database name, table, its index `name` or None) with the table's loads stopped and the
    catalog lock held (`hold=False`: the catalog lock only while looking them up)."""
    db, table_id = _table_ids(cat, db_name, table_name)
    with load_gate(table_id).exclusive(), table_lock(table_id):
        with cat.lock:
            table = cat.get_table(db, table_name)
            check_normal(cat, table)
            found = (db, table, _named(table, name))
            if hold:
                yield found
                return
        yield found


def _named(table: OlapTable, name: str) -> TableIndex | None:
    return next((i for i in table.table_indexes if i.name.lower() == name.lower()), None)


def _tablets_with(table: OlapTable, column: str,
                  partitions: set[str] | None = None) -> list[int]:
    """Tablets of every materialized index that stores `column` (of some partitions)."""
    out = []
    for p in table.partitions.values():
        if partitions is not None and p.name.lower() not in partitions:
            continue
        for index_id, tablet_ids in p.tablets_by_index.items():
            if column in table.indexes[index_id].columns:
                out.extend(tablet_ids)
    return out


def set_bloom_filter_properties(cat: Catalog, db_name: str | None, table_name: str,
                                given: dict[str, str]) -> None:
    """ALTER TABLE t SET ("bloom_filter_columns" = "a,b" [, "bloom_filter_fpp" = "0.01"]).

    Validated as at CREATE TABLE and journaled as a table property change; the tablets take the
    new schema at once, so every segment written from now on (loads, and compaction rewriting
    older data) carries the filters. Segments written before keep what they have: a reader
    uses a segment's bloom filter only for a column the schema lists and the segment holds.
    An empty column list removes the bloom filters.
    """
    with locked_table(cat, db_name, table_name) as table:
        check_normal(cat, table)
        merged = {k: v for k, v in table.properties.items() if k in (BF_COLUMNS, BF_FPP)}
        merged.update(given)
        analyze_bloom_filter(merged, table.columns, table.keys_type)
        remove = [k for k, v in merged.items() if not v.strip()]
        set_ = {k: v for k, v in merged.items() if k not in remove}
        cat._log("modify_table_properties", {"db": db_of(cat, table), "table": table.name,
                                             "set": set_, "remove": remove})
        update_tablet_schemas(cat, table)
