"""DELETE FROM t [PARTITION ...] WHERE <conditions>: a delete-predicate version per partition.

The life of a DELETE (`delete_rows`):
 1. `analyze`: Doris's rules (Nereids `DeleteFromCommand.checkColumn`): each condition is on a
    column of the table, not FLOAT/DOUBLE; on AGGREGATE and UNIQUE (merge-on-read) tables only
    key columns; every condition column exists in every materialized index; values parse as the
    column's type. Conditions become storage ColumnPredicates (`x NOT IN (a, b)` becomes
    `x != a AND x != b`, which is the same for every x, NULL included).
 2. Under the table's load lock (loads and DELETEs take versions in order), every tablet of the
    chosen partitions (all of them without a PARTITION clause) writes a pending *delete rowset*
    (`Tablet.write_delete`: no files, only the conjunction).
 3. `Catalog.publish` journals them with each partition's next version, as a load does: the
    DELETE is visible at once in every partition, VisibleVersion rises by one, and reads at that
    version drop matching rows of rowsets with lower versions only (rows loaded later survive).
Doris 2.1 prunes the partitions a DELETE without PARTITION touches with its WHERE; minidoris
gives every partition the delete version.
"""

from __future__ import annotations

from catalog import delete_history
from catalog.catalog import Catalog
from catalog.errors import AnalysisError, DdlError, NotSupported
from catalog.compaction import check_version_count
from catalog.load import table_lock
from catalog.model import AGG_KEYS, UNIQUE_KEYS, OlapTable
from catalog.unique_model import is_merge_on_write
from catalog.storage_statements import DeleteCondition, DeleteStmt
from catalog.values import parse_value
from storage import ColumnPredicate, ScanStats

_COMPARISONS = ("=", "!=", "<", "<=", ">", ">=")


def analyze(table: OlapTable, conditions: list[DeleteCondition]) -> list[ColumnPredicate]:
    """The storage predicates of a DELETE's conditions; raises with Doris's messages."""
    if not conditions:
        raise AnalysisError("Where clause is not set")
    out: list[ColumnPredicate] = []
    for cond in conditions:
        col = table.column(cond.column)
        if col is None:
            raise AnalysisError(f"Unknown column '{cond.column}' in '{table.name}'")
        if col.type.is_float:
            raise AnalysisError(f"Column[{col.name}] type is float or double.")
        if not col.is_key and (table.keys_type == AGG_KEYS or
                               table.keys_type == UNIQUE_KEYS and not is_merge_on_write(table)):
            kind = "an aggregate table" if table.keys_type == AGG_KEYS else \
                "an unique table without merge-on-write"
            raise AnalysisError("delete predicate on value column only supports Unique table "
                                "with merge-on-write enabled and Duplicate table, but "
                                f"Table[{table.name}] is {kind}.")
        for meta in table.indexes.values():
            if col.name not in meta.columns:
                raise AnalysisError(f"column {col.name} not found in materialized index "
                                    f"{meta.name}")
            if meta.keys_type == AGG_KEYS and not next(
                    c for c in table.index_columns(meta.index_id) if c.name == col.name).is_key:
                # a materialized view aggregates it: its rows no longer hold single values
                raise AnalysisError(f"Column[{col.name}] is not key column in materialized "
                                    f"index {meta.name}")
        values = tuple(_value(col, text) for text in cond.values)
        if cond.op == "not_in":
            out.extend(ColumnPredicate(col.name, "!=", (v,)) for v in values)
        else:
            out.append(ColumnPredicate(col.name, cond.op, values))
    return out


def _value(col, text: str | None):
    if text is None:
        return None
    try:
        return parse_value(col.type, text)
    except DdlError:
        raise AnalysisError(f"Invalid column value[{text}] for column {col.name}") from None


def delete_rows(cat: Catalog, db_name: str | None, stmt: DeleteStmt) -> int:
    """Apply a DELETE; returns its transaction id."""
    with cat.lock:
        db = cat.get_db(stmt.db or db_name).name
        table = cat.get_table(db, stmt.table)
    predicates = analyze(table, stmt.conditions)
    with table_lock(table.table_id):
        with cat.lock:
            table = cat.get_table(db, stmt.table)
            partitions = partitions_of(table, stmt.partitions)
            check_version_count(cat, [tid for p in partitions for tid in p.tablets], "push data")
            txn_id = cat.begin_txn()
            by_key = _merge_on_write_keys(table, predicates)
            rowsets = [(p.partition_id, tid, cat.engine.get_tablet(tid).write_delete(
                           by_key(cat.engine.get_tablet(tid), p.visible_version), txn_id))
                       for p in partitions for tid in p.tablets]
            versions = {p.partition_id: p.visible_version + 1 for p in partitions}
        cat.publish(db, table.name, txn_id, versions, rowsets,
                    delete_info=delete_history.info(stmt, table))
    return txn_id


def _merge_on_write_keys(table: OlapTable, predicates: list[ColumnPredicate]):
    """How each tablet's delete conjunction is made. A DELETE testing value columns of a
    merge-on-write table removes the keys whose *current* row matches (Doris marks them in
    the delete bitmap); a per-rowset predicate on the value would bring back the previous
    version of a key. So the keys matching now become the tablet's predicate `key IN (...)`,
    which removes every earlier version of them. One key column only (a conjunction of
    column predicates cannot name a set of key tuples)."""
    keys = [c.name for c in table.key_columns]
    if not any(not table.column(p.column).is_key for p in predicates) \
            or not is_merge_on_write(table):
        return lambda tablet, version: predicates
    if len(keys) != 1:
        raise NotSupported("DELETE on value columns of a merge-on-write table with more than "
                           "one key column is not supported yet")

    def by_key(tablet, version: int) -> list[ColumnPredicate]:
        found = tablet.read(version, keys, predicates, ScanStats()).column(0)
        values = tuple(v for v in found.to_pylist() if v is not None)
        return [ColumnPredicate(keys[0], "in", values)] if values else predicates
    return by_key


def partitions_of(table: OlapTable, names: list[str] | None,
                  missing: str = "Partition does not exist. name: {}") -> list:
    """The partitions a statement names (all without a PARTITION clause); `missing`: the
    statement's error for an unknown name (DELETE's by default)."""
    if names is None:
        return table.sorted_partitions()
    out = []
    for name in names:
        p = table.partition_by_name(name)
        if p is None:
            raise DdlError(missing.format(name))
        out.append(p)
    return out
