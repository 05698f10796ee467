"""Slice units: many tablets whose rows are each one slice of a load file, read as one table.

After small loads and slice compaction (storage/slice_compaction.py) a table of hundreds of
tablets holds, per tablet, one slice of a shared load file. Reading them tablet by tablet costs a
predicate evaluation and a filter per tablet; a slice unit does each once (as storage/scan_unit.py
does for small segments):

    eligible(snapshot)     one data rowset, a slice written under the tablet's current schema,
                           no DELETE version, not a Unique tablet (its delete sign and bitmap)
    read_slices(snapshots, columns, predicates, stats) -> (rows, rows per snapshot)
        every slice's row positions gathered from its memory-mapped file (one `take` per
        file), the predicates evaluated once over them, the rows filtered once, the count of
        rows each snapshot gave (callers slice per tablet)

The rows are exactly those `TabletSnapshot.read` returns for each snapshot, in snapshot order.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from storage.errors import StorageError
from storage.predicate import ColumnPredicate, prepare
from storage.row_filter import row_mask
from storage.schema import UNIQUE_KEYS
from storage.snapshot import TabletSnapshot
from storage.stats import ScanStats


def eligible(snapshot: TabletSnapshot) -> bool:
    schema = snapshot.schema
    if schema.keys_type == UNIQUE_KEYS:
        return False
    data = [r for r in snapshot.rowsets if r.num_rows]
    if len(data) != 1 or any(r.is_delete for r in snapshot.rowsets):
        return False
    rowset = data[0]
    return rowset.load_file is not None and not rowset.segments and \
        rowset.column_ids == schema.column_ids()


def read_slices(snapshots: list[TabletSnapshot], columns: list[str],
                predicates: list[ColumnPredicate],
                stats: ScanStats) -> tuple[pa.Table, np.ndarray] | None:
    """The snapshots' rows satisfying `predicates`, `columns` in order, snapshot after snapshot,
    and how many rows each gave; every snapshot must be `eligible`. None (nothing read) when
    the files store a column in different types: read them one by one."""
    needed = list(dict.fromkeys([*columns, *(p.column for p in predicates)]))
    slices = []
    for snap in snapshots:
        if snap.released:
            raise StorageError(f"Snapshot of tablet {snap.tablet.tablet_id} at version "
                               f"{snap.version} was released")
        for name in needed:
            if not snap.schema.has_column(name):
                raise StorageError(f"Unknown column '{name}' in tablet {snap.tablet.tablet_id}")
        slices.append(next(r for r in snap.rowsets if r.num_rows))
    files = snapshots[0].tablet.options.load_files
    names = list(dict.fromkeys(r.load_file for r in slices))
    tables = [files.table(n).select(needed) for n in names]
    if any(not t.schema.equals(tables[0].schema) for t in tables[1:]):
        return None
    base = dict(zip(names, np.cumsum([0] + [t.num_rows for t in tables[:-1]]).tolist()))
    source = pa.concat_tables(tables) if len(tables) > 1 else tables[0]
    lengths = np.fromiter((r.num_rows for r in slices), np.int64, len(slices))
    starts = np.fromiter((base[r.load_file] + r.load_offset for r in slices), np.int64,
                         len(slices))
    total = int(lengths.sum())
    offsets = np.repeat(starts - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    rows = source.take(pa.array(offsets + np.arange(total, dtype=np.int64)))
    stats.rowsets_read += len(slices)
    stats.segments_total += len(slices)
    stats.segments_read += len(slices)
    stats.rows_total += total
    stats.rows_read += total
    out_rows = lengths
    if predicates and total:
        schema = snapshots[0].schema
        arrays: dict[str, pa.Array] = {}

        def column(name: str) -> pa.Array:
            if name not in arrays:
                arrays[name] = rows.column(name).combine_chunks()
            return arrays[name]

        prepared = [prepare(p, schema.column(p.column).type) for p in predicates]
        mask = row_mask(prepared, column, total)
        stats.rows_conditions_filtered += total - int(np.count_nonzero(mask))
        owner = np.repeat(np.arange(len(slices)), lengths)
        out_rows = np.bincount(owner[mask], minlength=len(slices)).astype(np.int64)
        rows = rows.filter(pa.array(mask))
    table = rows.select(list(columns)) if columns else \
        pa.table({"_": pa.nulls(int(out_rows.sum()))}).select([])
    stats.rows_returned += table.num_rows
    return table, out_rows
