"""Slice units: many tablets whose rows are slices of load files, read as one table.

After small loads and slice compaction (storage/slice_compaction.py) a table of hundreds of
tablets holds, per tablet, one slice of a shared load file. Reading them tablet by tablet costs a
predicate evaluation and a filter per tablet; a slice unit does each once (as storage/scan_unit.py
does for small segments):

    eligible(snapshot)     every data rowset a slice written under the tablet's current schema,
                           one of them or a Duplicate tablet (nothing to merge), no DELETE
                           version
    read_slices(snapshots, columns, predicates, stats) -> (rows, rows per snapshot)
        every slice's rows gathered from the memory-mapped files (one `take`; the gathered
        columns kept in the page cache), the predicates evaluated once over them, the rows
        filtered once, the count of rows each snapshot gave (callers slice per tablet)

The rows are exactly those `TabletSnapshot.read` returns for each snapshot, in snapshot order.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from storage.errors import StorageError
from storage.load_file import gather_slices
from storage.predicate import ColumnPredicate, prepare
from storage.row_filter import row_mask
from storage.schema import DUP_KEYS, UNIQUE_KEYS
from storage.snapshot import TabletSnapshot
from storage.stats import ScanStats


def eligible(snapshot: TabletSnapshot) -> bool:
    schema = snapshot.schema
    if schema.keys_type == UNIQUE_KEYS:  # the delete sign, merge-on-write's bitmap
        return False
    summary = snapshot.summary  # storage/rowset_summary.py
    data = summary.data
    if not data or summary.deletes or summary.slices < len(data):
        return False
    if len(data) > 1 and schema.keys_type != DUP_KEYS:
        return False
    ids = schema.column_ids()
    return all(r.column_ids == ids for r in data)


def read_slices(snapshots: list[TabletSnapshot], columns: list[str],
                predicates: list[ColumnPredicate],
                stats: ScanStats) -> tuple[pa.Table, np.ndarray] | None:
    """The snapshots' rows satisfying `predicates`, `columns` in order, snapshot after snapshot,
    and how many rows each gave; every snapshot must be `eligible`. None (nothing read) when
    the files store a column in different types: read them one by one."""
    needed = list(dict.fromkeys([*columns, *(p.column for p in predicates)]))
    slices, owners = [], []
    for i, snap in enumerate(snapshots):
        if snap.released:
            raise StorageError(f"Snapshot of tablet {snap.tablet.tablet_id} at version "
                               f"{snap.version} was released")
        for name in needed:
            if not snap.schema.has_column(name):
                raise StorageError(f"Unknown column '{name}' in tablet {snap.tablet.tablet_id}")
        data = [r for r in snap.rowsets if r.num_rows]
        slices.extend(data)
        owners.extend([i] * len(data))
    files = snapshots[0].tablet.options.load_files
    cache = snapshots[0].tablet.options.page_cache
    names = list(dict.fromkeys(r.load_file for r in slices))
    tables = [files.table(n) for n in names]
    if any(not t.schema.equals(tables[0].schema) for t in tables[1:]):
        return None
    lengths = np.fromiter((r.num_rows for r in slices), np.int64, len(slices))
    total = int(lengths.sum())
    # the gathered columns are kept in the page cache under the slices' identity (load files
    # are immutable and never reused), as scan_unit keeps a unit's concatenated columns
    key = ("slices", tuple((r.load_file, r.load_offset, r.num_rows) for r in slices))
    gathered = {n: cache.get((*key, n)) for n in needed}
    missing = [n for n, arr in gathered.items() if arr is None]
    if missing:
        taken = gather_slices(files, slices, missing)
        for name in missing:
            gathered[name] = taken.column(name).combine_chunks()
            cache.put((*key, name), gathered[name])
    rows = pa.Table.from_arrays([gathered[n] for n in needed], names=needed)
    stats.rowsets_read += len(slices)
    stats.segments_total += len(slices)
    stats.segments_read += len(slices)
    stats.rows_total += total
    stats.rows_read += total
    owner = np.repeat(np.asarray(owners, dtype=np.int64), lengths)
    out_rows = np.bincount(owner, minlength=len(snapshots)).astype(np.int64)
    if predicates and total:
        schema = snapshots[0].schema
        def column(name: str) -> pa.Array:
            return gathered[name]

        prepared = [prepare(p, schema.column(p.column).type) for p in predicates]
        mask = row_mask(prepared, column, total)
        stats.rows_conditions_filtered += total - int(np.count_nonzero(mask))
        out_rows = np.bincount(owner[mask], minlength=len(snapshots)).astype(np.int64)
        rows = rows.filter(pa.array(mask))
    table = rows.select(list(columns)) if columns else \
        pa.table({"_": pa.nulls(int(out_rows.sum()))}).select([])
    stats.rows_returned += table.num_rows
    return table, out_rows
