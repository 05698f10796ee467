"""Reading a tablet's rowsets: the rows of a snapshot (storage/snapshot.py), merged by model.

    read_rowsets(tablet, schema, rowsets, cols, preds, stats, ..., summary)
        each data rowset is read minus the rows matching the delete predicates of later
        versions among `rowsets` (a DELETE affects only rows loaded before it), then
          DUP_KEYS, or a single rowset: each segment scanned with all predicates pushed down,
            results concatenated
          UNIQUE_KEYS merge-on-write: the same, each segment minus the rows of the tablet's
            delete bitmap at the snapshot's version (storage/delete_bitmap.py): no key merge,
            value predicates pushed down like key ones
          AGG_KEYS / UNIQUE_KEYS with several rowsets, or one overlapping rowset (a large
            load's several flushes, storage/rowset_writer.py) (merge-on-read): key predicates pushed
            down (they select whole key groups), all key columns + needed value columns read
            in version order, stable sort + merge.merge_sorted (the older versions' merged
            rows kept from an earlier read where they fit: storage/merged_base.py), then value
            predicates (a filter on a value column sees merged values only)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from storage.column_mapping import delete_conjunctions
from storage.errors import StorageError
from storage.inverted import filter as inverted_filter
from storage.memtable import aggregations
from storage.merged_base import merged_rows
from storage.predicate import ColumnPredicate, prepare
from storage.row_filter import combined_mask
from storage.rowset import RowsetMeta
from storage.rowset_summary import RowsetSummary
from storage.schema import AGG_KEYS, TabletSchema
from storage.stats import ScanStats

if TYPE_CHECKING:
    from storage.tablet import Tablet


def read_rowsets(tablet: Tablet, schema: TabletSchema, rowsets: list[RowsetMeta],
                 columns: list[str], predicates: list[ColumnPredicate],
                 stats: ScanStats, version: int | None = None,
                 merge: bool = True, summary: RowsetSummary | None = None) -> pa.Table:
    """Rows of `rowsets` (the path of `version`) satisfying the predicates, `columns` in
    order. `merge=False` (Doris's pre-aggregation: the query aggregates the rows again in a
    way the merge does not change) reads an AGGREGATE tablet's rows as stored, unmerged;
    Unique tablets always merge when read (the last version and the delete sign decide which
    rows exist), unless they merge on write."""
    for name in [*columns, *(p.column for p in predicates)]:
        if not schema.has_column(name):
            raise StorageError(f"Unknown column '{name}' in tablet {tablet.tablet_id}")
    if summary is None:
        summary = RowsetSummary.of(rowsets)
    data = list(summary.data)
    deletes = delete_conjunctions(rowsets, schema) if summary.deletes else []
    stats.rowsets_read += len(data)
    if (merge or schema.keys_type != AGG_KEYS) and schema.merges_when_read and \
            (len(data) > 1 or summary.overlapping):
        with inverted_filter.suspended():  # a value's older version may match, its newest not
            result = _merge_read(tablet, schema, data, deletes, columns, predicates, stats,
                                 version)
    else:
        bitmap = None
        if schema.merge_on_write:
            at = version if version is not None else max((r.end_version for r in rowsets),
                                                          default=0)
            bitmap = tablet.delete_bitmap.at(at)
        result = tablet.concat(tablet.scan_all(schema, data, deletes, columns, predicates,
                                               stats, bitmap), columns, schema)
    stats.rows_returned += result.num_rows
    return result


def _merge_read(tablet: Tablet, schema: TabletSchema, data: list[RowsetMeta], deletes: list,
                columns: list[str], predicates: list[ColumnPredicate],
                stats: ScanStats, version: int | None) -> pa.Table:
    keys = schema.key_names
    key_preds = [p for p in predicates if schema.column(p.column).is_key]
    value_preds = [p for p in predicates if not schema.column(p.column).is_key]
    seq = [schema.sequence_column] if schema.sequence_column else []
    values = [c for c in dict.fromkeys([*columns, *(p.column for p in value_preds), *seq])
              if not schema.column(c).is_key]
    merged = merged_rows(tablet, schema, data, deletes, [*keys, *values], key_preds,
                         aggregations(schema, values), stats, version)
    if value_preds:
        prepared = [prepare(p, schema.column(p.column).type) for p in value_preds]
        mask = combined_mask(prepared, {c: merged.column(c) for c in values})
        filtered = merged.filter(mask)
        stats.rows_value_filtered += merged.num_rows - filtered.num_rows
        merged = filtered
    return project(merged, columns)


def rows_only(num_rows: int) -> pa.Table:
    return pa.table({"_": pa.nulls(num_rows)}).select([])


def project(table: pa.Table, columns: list[str]) -> pa.Table:
    if not columns:
        return rows_only(table.num_rows)
    return pa.Table.from_arrays([table.column(c) for c in columns], names=list(columns))
