"""Cumulative compaction of many tablets' load-file slices at once, in one file.

A small load leaves each touched tablet a slice of one load file (storage/load_file.py). A
table of hundreds of tablets fed by many small loads then holds, per tablet, many slices of a
few rows each; compacting them tablet by tablet costs a segment file (pages, indexes, fsync)
and a journal entry per tablet for a handful of rows: with 336 tablets that was three quarters
of the server's CPU during a stream of 1,000-row INSERTs. Here the inputs of many tablets of one
materialized index merge together, as the load that wrote them did:

    inputs   [(tablet, [its input slices in version order]), ...]   one index schema
    rows     every slice's rows gathered in (tablet, version) order: one `take` over the
             memory-mapped input files, a group column naming each row's tablet
    merge    memtable.flush_grouped: stable sort by (tablet, key), rows with equal keys
             folded by the model within a tablet (the cumulative merge of storage/compaction.py
             tablet by tablet: the same flush, so the same result)
    write    one new load file `compact_<txn>_<group>.arrow`, fsynced once
    outputs  per tablet a pending slice rowset spanning its inputs' versions; the caller
             journals the swap (catalog/slice_compaction.py) and each tablet's
             `replace_rowsets` makes it visible, the inputs stale

Only what merges the same way either way is taken (`eligible`): cumulative inputs that are all
slices written under the tablet's current schema, without DELETE versions, of Duplicate and
Aggregate tablets (Unique tablets keep their own path: the delete sign, the sequence column
and merge-on-write), and small enough that the output is still a slice (MAX_OUTPUT_ROWS).
Larger inputs take the per-tablet compaction, which writes segments with every index.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from storage.load_file import LoadFiles, gather_slices
from storage.memtable import flush_grouped
from storage.rowset import RowsetMeta
from storage.schema import UNIQUE_KEYS, TabletSchema
from storage.tablet import Tablet

MAX_OUTPUT_ROWS = 4096  # inputs of more rows per tablet are compacted into segments instead


@dataclass
class SliceInputs:
    """One tablet's share of a slice compaction: its input slices, in version order."""
    tablet: Tablet
    inputs: list[RowsetMeta]


def eligible(tablet: Tablet, inputs: list[RowsetMeta]) -> bool:
    """True when `inputs` (a cumulative compaction's, version order) merge here exactly as the
    per-tablet compaction would merge them."""
    schema = tablet.schema
    if schema.keys_type == UNIQUE_KEYS or len(inputs) < 2:
        return False
    ids = schema.column_ids()
    rows = 0
    for meta in inputs:
        if meta.load_file is None or meta.segments or meta.is_delete or meta.overlapping \
                or meta.column_ids != ids:
            return False
        rows += meta.num_rows
    return rows <= MAX_OUTPUT_ROWS


def group_key(tablet: Tablet) -> tuple:
    """Tablets whose slices may share one output file: the same index schema."""
    schema = tablet.schema
    return (tuple(schema.names), schema.keys_type,
            tuple(sorted((schema.column_ids() or {}).items())))


def compact_slices(files: LoadFiles, schema: TabletSchema, work: list[SliceInputs], name: str,
                   txn_id: int) -> list[RowsetMeta]:
    """Merge every tablet's input slices into one new load file `name`; the pending output
    rowset of each tablet of `work`, in order (the inputs stay published until the swap)."""
    rows = gather_slices(files, [m for w in work for m in w.inputs], schema.names)
    per_tablet = np.fromiter((sum(m.num_rows for m in w.inputs) for w in work), np.int64)
    groups = np.repeat(np.arange(len(work), dtype=np.int64), per_tablet)
    merged, group_col = flush_grouped(rows, schema, pa.array(groups))
    size = files.write(name, merged)
    bounds = np.searchsorted(group_col.to_numpy(), np.arange(len(work) + 1))
    outputs: list[RowsetMeta] = []
    try:
        for g, w in enumerate(work):
            count = int(bounds[g + 1] - bounds[g])
            meta = w.tablet.adopt_load_slice(name, int(bounds[g]), count,
                                             size * count // max(merged.num_rows, 1), txn_id)
            meta.start_version = w.inputs[0].start_version
            meta.end_version = w.inputs[-1].end_version
            outputs.append(meta)
    except BaseException:
        for w, meta in zip(work, outputs):
            w.tablet.abort_rowset(meta)
        raise
    return outputs
