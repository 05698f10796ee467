"""Cumulative compaction: consecutive data rowsets of a tablet merged into one.

Every load writes one rowset per tablet it touches, and every rowset costs each scan its
segments' fixed work (footer, zone maps, short key search, page bookkeeping). Doris's
cumulative compaction merges them; so does this module, in the same shape:

    pick_inputs(rowsets, min_deltas)   the first run of >= min_deltas consecutive published
                                       data rowsets with no delete rowset inside it (a DELETE
                                       removes rows of older versions only, so a run must not
                                       straddle one; deletes after the run still apply to the
                                       output, whose end version is the run's last)
    merge_rows(tables, schema)         the inputs' rows in version order, sorted by key and,
                                       for AGGREGATE/UNIQUE tables, merged (the memtable's
                                       flush: stable sort, last version wins for REPLACE)

`Tablet.compact` writes the output as a pending rowset spanning [first start, last end];
`Tablet.replace_rowsets` swaps it in for the inputs once the catalog has journaled the swap.
Input files stay on disk for `STALE_SWEEP_SECONDS` (Doris's tablet_rowset_stale_sweep_time_sec)
so that scans which took their snapshot before the swap can finish; a restart deletes them
as files of unpublished rowsets.
"""

from __future__ import annotations

import pyarrow as pa

from storage.memtable import flush
from storage.rowset import RowsetMeta
from storage.schema import TabletSchema

STALE_SWEEP_SECONDS = 300.0


def pick_inputs(rowsets: list[RowsetMeta], min_deltas: int) -> list[RowsetMeta] | None:
    """The first run of at least `min_deltas` consecutive data rowsets, or None."""
    run: list[RowsetMeta] = []
    for rs in [*rowsets, None]:
        if rs is not None and not rs.is_delete:
            run.append(rs)
            continue
        if len(run) >= max(2, min_deltas):
            return run
        run = []
    return None


def merge_rows(tables: list[pa.Table], schema: TabletSchema) -> pa.Table:
    """The rows of the inputs (in version order) as one flushed table."""
    return flush(pa.concat_tables(tables), schema)
