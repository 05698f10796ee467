"""Merging rowsets: a compaction's inputs merged as a stream, written segment by segment.

    merge_runs(runs, schema, base)   the rows of sorted runs (each an iterator of key-ordered
                                     batches), in chunks of consecutive key ranges
                                     (storage/sorted_runs.py: all rows of a key in one chunk),
                                     each chunk flushed as a memtable is (stable sort, so run
                                     order - version order - decides among equal keys; the
                                     last version wins for REPLACE and UNIQUE, SUM/MIN/MAX
                                     fold); a compaction from the tablet's first version drops
                                     the keys whose merged delete sign is 1
    merge_rows(tables, schema, base) the same over whole tables (one chunk)

The runs (`Tablet.compaction_runs`; inputs of at most `COMPACTION_WHOLE_ROWS` rows in all are
read whole as one run): a non-overlapping rowset is one run, its segments read in
order; an overlapping one (several flushes of one load) is one run per segment; each segment is
read `COMPACTION_BATCH_ROWS` rows at a time (SegmentReader.scan_batches), minus the rows of
DELETE versions among the inputs. Rowsets read through a column mapping (a schema change) or a
load file are read whole, as one sorted run. The merged chunks go to the output rowset's
writer, which writes a segment each time it holds `COMPACTION_SEGMENT_BYTES`
(RowsetWriter.add_sorted). So a compaction holds one batch per run plus one output segment,
not its inputs: peak memory no longer grows with the rowsets' size.

Which rowsets merge is the policy's (storage/compaction_policy.py, seed 002); `Tablet.compact`
writes the output as a pending rowset spanning their versions; `Tablet.replace_rowsets` swaps it
in once the catalog has journaled the swap (catalog/compaction.py). A crash before the swap
leaves a pending rowset that start-up removes (kill -9 safety is unchanged).
"""

from __future__ import annotations

from typing import Iterator

import pyarrow as pa
import pyarrow.compute as pc

from storage.memtable import flush
from storage.schema import DELETE_SIGN, TabletSchema
from storage.sorted_runs import RunKey, merge_chunks

COMPACTION_BATCH_ROWS = 65536
# Inputs of at most this many rows in all are merged as one run read whole: bounded anyway, and
# a merge of hundreds of small runs costs a few array calls per run and chunk.
COMPACTION_WHOLE_ROWS = 1 << 20
COMPACTION_SEGMENT_BYTES = 64 << 20  # at most max_segment_size


def merge_rows(tables: list[pa.Table], schema: TabletSchema, base: bool = False) -> pa.Table:
    """The rows of the inputs (in version order) as one flushed table. `base`: the inputs
    start at the tablet's first version, so a key whose merged delete sign is 1 has no older
    row left to hide and is dropped (Doris's base compaction; a cumulative one keeps it)."""
    merged = flush(pa.concat_tables(tables), schema)
    if base and schema.has_delete_sign and merged.num_rows:
        merged = merged.filter(pc.not_equal(merged.column(DELETE_SIGN), 1))
    return merged


def merge_runs(runs: list[Iterator[pa.Table]], schema: TabletSchema,
               base: bool = False) -> Iterator[pa.Table]:
    """The runs' rows (runs in version order, each sorted by the key) merged, chunk by chunk
    in key order; what `merge_rows` gives for their concatenation, cut into pieces."""
    keys = [RunKey(name) for name in schema.key_names]
    for chunk in merge_chunks(runs, keys):
        merged = merge_rows([chunk], schema, base)
        if merged.num_rows:
            yield merged
