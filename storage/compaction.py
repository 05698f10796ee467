"""Merging rowsets: the rows of a compaction's inputs as one flushed table.

    merge_rows(tables, schema)   the inputs' rows in version order, sorted by key and, for
                                 AGGREGATE/UNIQUE tables, merged (the memtable's flush: stable
                                 sort, the last version wins for REPLACE and UNIQUE, SUM/MIN/MAX
                                 fold); a compaction from the tablet's first version
                                 drops the keys whose merged delete sign is 1

Which rowsets merge is the policy's (storage/compaction_policy.py, seed 002); `Tablet.compact`
reads the inputs (minus the rows of DELETE versions among them) and writes the output as a
pending rowset spanning their versions; `Tablet.replace_rowsets` swaps it in once the catalog
has journaled the swap (catalog/compaction.py).
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from storage.memtable import flush
from storage.schema import DELETE_SIGN, TabletSchema


def merge_rows(tables: list[pa.Table], schema: TabletSchema, base: bool = False) -> pa.Table:
    """The rows of the inputs (in version order) as one flushed table. `base`: the inputs
    start at the tablet's first version, so a key whose merged delete sign is 1 has no older
    row left to hide and is dropped (Doris's base compaction; a cumulative one keeps it)."""
    merged = flush(pa.concat_tables(tables), schema)
    if base and schema.has_delete_sign and merged.num_rows:
        merged = merged.filter(pc.not_equal(merged.column(DELETE_SIGN), 1))
    return merged
