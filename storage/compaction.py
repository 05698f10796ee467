"""Merging rowsets: the rows of a compaction's inputs as one flushed table.

    merge_rows(tables, schema)   the inputs' rows in version order, sorted by key and, for
                                 AGGREGATE/UNIQUE tables, merged (the memtable's flush: stable
                                 sort, the last version wins for REPLACE and UNIQUE, SUM/MIN/MAX
                                 fold)

Which rowsets merge is the policy's (storage/compaction_policy.py, seed 002); `Tablet.compact`
reads the inputs (minus the rows of DELETE versions among them) and writes the output as a
pending rowset spanning their versions; `Tablet.replace_rowsets` swaps it in once the catalog
has journaled the swap (catalog/compaction.py).
"""

from __future__ import annotations

import pyarrow as pa

from storage.memtable import flush
from storage.schema import TabletSchema


def merge_rows(tables: list[pa.Table], schema: TabletSchema) -> pa.Table:
    """The rows of the inputs (in version order) as one flushed table."""
    return flush(pa.concat_tables(tables), schema)
