"""The merged rows of a tablet's older versions, kept for the next merge-on-read.

An Aggregate (or merge-on-read Unique) tablet under a stream of small loads is read as its base
and cumulative rowsets plus every load's rowset since the last compaction: each query read all
of them again and sorted and merged all their rows (Doris does the same; its compaction keeps
the rowset count low, but the rows are merged on every read all the same). Published versions
never change, so the merge of versions [0, V] is the same table for every later snapshot: a
read keeps its merged rows in the engine's page cache (storage/page_cache.py, the same bounded
memory, least recently used out) under

    (MERGED, tablet id, columns read, key predicates) -> (schema, V, merged rows)

and the next read whose snapshot contains rowsets ending exactly at V (no compaction output
spans V) reads only its rowsets above V, sorts them after the kept rows (a timsort over sorted
runs: storage/key_codes.py) and merges. It is not used when the schema changed (light schema
change), when a DELETE above V would remove kept rows, when the snapshot is older than V, or
for predicates carrying a runtime filter's values. Entries larger than 1/16 of the cache are
not kept. Rows folded while building the kept table are not counted again (RowsMerged counts
this read's folds); `MergedBaseRows` counts the rows a read took from a kept table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from storage.memtable import sort_by_key
from storage.merge import merge_sorted
from storage.predicate import ColumnPredicate
from storage.rowset import RowsetMeta
from storage.schema import TabletSchema
from storage.stats import ScanStats

if TYPE_CHECKING:
    from storage.tablet import Tablet

MERGED = "\x00merged"  # the page cache's column slot for merged rows (never a column name)
MAX_SHARE = 16  # an entry may take at most 1/MAX_SHARE of the cache


def merged_rows(tablet: Tablet, schema: TabletSchema, data: list[RowsetMeta], deletes: list,
                columns: list[str], predicates: list[ColumnPredicate],
                aggregations: dict[str, str], stats: ScanStats,
                version: int | None) -> pa.Table:
    """The rows of `data` (non-empty rowsets of the snapshot at `version`, in version order)
    with the key `predicates` applied, `columns` (keys first) sorted by key and merged by the
    data model; from a kept merge of the older versions where one fits."""
    cache = tablet.options.page_cache
    key = _cache_key(tablet, columns, predicates) if cache.enabled else None
    base: pa.Table | None = None
    rest, hit = data, None
    if key is not None and version is not None:
        hit = cache.get(key)
        base, rest = _reusable(hit, schema, data, deletes, version)
    parts = tablet.scan_all(schema, rest, deletes, columns, predicates, stats) if rest else []
    if base is not None:
        stats.merged_base_rows += base.num_rows
        parts = [base, *parts]
    table = tablet.concat(parts, columns, schema)
    merged = merge_sorted(sort_by_key(table, schema.merge_order()), schema.key_names,
                          aggregations)
    stats.rows_merged += table.num_rows - merged.num_rows
    if key is not None and version is not None:
        covered, size = _covered(data, deletes), merged.get_total_buffer_size()
        newer = hit is not None and hit[0] is schema and hit[1] > covered  # a later read's
        if size * MAX_SHARE <= cache.capacity and not newer:
            cache.put(key, (schema, covered, merged), size)
    return merged


def _cache_key(tablet: Tablet, columns: list[str],
               predicates: list[ColumnPredicate]) -> tuple | None:
    if any(p.array is not None for p in predicates):
        return None  # a runtime filter's values: one query's, and large
    preds = tuple((p.column, p.op, tuple((type(v).__name__, v) for v in p.values))
                  for p in predicates)
    return (tablet.tablet_id, MERGED, tuple(columns), preds)


def _covered(data: list[RowsetMeta], deletes: list) -> int:
    """The last version the merged rows reflect: the last data rowset's, or a later DELETE's
    (its conditions were applied to every row)."""
    return max([data[-1].end_version if data else 0, *(v for v, _ in deletes)])


def _reusable(hit, schema: TabletSchema, data: list[RowsetMeta], deletes: list,
              version: int) -> tuple[pa.Table | None, list[RowsetMeta]]:
    """(kept rows, the rowsets still to read) when the kept merge fits this snapshot, else
    (None, every rowset)."""
    if hit is None:
        return None, data
    kept_schema, covered, rows = hit
    if kept_schema is not schema or covered > version:
        return None, data
    if any(v > covered for v, _ in deletes):
        return None, data  # a later DELETE removes rows the kept merge holds
    rest = [r for r in data if r.start_version > covered]
    if any(r.start_version <= covered < r.end_version for r in data):
        return None, data  # a compaction output spans the kept version
    return rows, rest
