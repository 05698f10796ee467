"""DELETE FROM a merge-on-write Unique table: rows with the delete sign, as Doris 2.1 writes them.

Doris 2.1 runs a DELETE on a merge-on-write table (without `enable_mow_light_delete`) as an
INSERT of the matching rows with `__DORIS_DELETE_SIGN__` = 1 (Nereids DeleteFromCommand ->
DeleteFromUsingCommand), so the condition may test any column and the key's current row is what
it tests. Here (`delete_by_sign`):
 1. the conditions are checked as any DELETE's (catalog/delete.py `analyze`, Doris's texts);
 2. under the table's load lock, the current rows of the chosen partitions that are not deleted
    already and match are read (merged, so value conditions see the latest row of each key),
    every column with the hidden ones (their sequence value too: a delete row must not lose to
    the row it deletes);
 3. they are loaded back with the sign set to 1: one load, one version per touched partition;
    the affected rows are the rows deleted.
Tables without the sign (created before hidden columns existed here) keep the delete-predicate
path.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from catalog.catalog import Catalog
from catalog.delete import analyze, partitions_of
from catalog.hidden_columns import has_delete_sign
from catalog.load import load_table, table_lock
from catalog.storage_statements import DeleteStmt
from catalog.unique_model import is_merge_on_write
from storage import ColumnPredicate, ScanStats
from storage.schema import DELETE_SIGN


def delete_by_sign(cat: Catalog, db_name: str | None, stmt: DeleteStmt,
                   now) -> tuple[int, int] | None:
    """(rows deleted, transaction id), or None when the table takes the predicate path."""
    with cat.lock:
        db = cat.get_db(stmt.db or db_name).name
        table = cat.get_table(db, stmt.table)
    if not (is_merge_on_write(table) and has_delete_sign(table)):
        return None
    predicates = analyze(table, stmt.conditions)
    live = [ColumnPredicate(DELETE_SIGN, "=", (0,)), *predicates]
    with table_lock(table.table_id):
        with cat.lock:
            table = cat.get_table(db, stmt.table)
            names = [c.name for c in [*table.columns, *table.hidden_columns]]
            targets = [(cat.engine.get_tablet(tid), p.visible_version)
                       for p in partitions_of(table, stmt.partitions)
                       for tid in p.tablets_by_index[table.base_index_id]]
        parts = [tablet.read(version, names, live, ScanStats()) for tablet, version in targets]
        rows = pa.concat_tables(parts) if parts else None
        if rows is None or rows.num_rows == 0:
            return 0, 0
        sign = pa.array(np.ones(rows.num_rows, dtype=np.int8))
        rows = rows.set_column(names.index(DELETE_SIGN), DELETE_SIGN, sign)
        return load_table(cat, db, table.name, rows, now)
