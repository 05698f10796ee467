"""The merged rows of a tablet's older versions, kept for the next merge-on-read.

An Aggregate (or merge-on-read Unique) tablet under a stream of small loads is read as its base
and cumulative rowsets plus every load's rowset since the last compaction: each query read all
of them again and sorted and merged all their rows (Doris does the same; its compaction keeps
the rowset count low, but the rows are merged on every read all the same). Published versions
never change, so the merge of versions [0, V] is the same table for every later snapshot: a
read keeps its merged rows in the engine's page cache (storage/page_cache.py, the same bounded
memory, least recently used out) under

    (MERGED, tablet id, columns read, key predicates)
        -> (schema, V, merged rows, key codes, the entry kept before it)

and the next read whose snapshot contains rowsets ending exactly at V (no compaction output
spans V) reads only its rowsets above V and folds them into the kept rows by binary search on
the kept rows' packed key codes, kept with them (storage/merge_into.py: integer and date
columns without NULLs, SUM / MAX / MIN / REPLACE, no sequence column), or else sorts them after
the kept rows (a timsort over sorted runs: storage/key_codes.py) and merges. The merges kept
before the newest stay behind it (KEPT_VERSIONS in all, the older ones within 1/OLDER_SHARE of
the cache): readers of a table under a stream of loads hold snapshots several versions apart,
and one whose snapshot is older than the newest kept merge uses the newest older one (without
them, 24% of the tablet reads in the mixed-clients benchmark merged from scratch). A kept merge
is not used when the schema changed (light schema change), when a DELETE above V would remove
kept rows, when the snapshot is older than every kept V, or for predicates carrying a runtime
filter's values. Entries larger than 1/16 of the cache are not kept. Rows folded while building
the kept table are not counted again (RowsMerged counts this read's folds); `MergedBaseRows`
counts the rows a read took from a kept table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from storage.memtable import sort_by_key
from storage.merge import merge_sorted
from storage.merge_into import fold_into, kept_keys
from storage.predicate import ColumnPredicate
from storage.rowset import RowsetMeta
from storage.schema import TabletSchema
from storage.stats import ScanStats

if TYPE_CHECKING:
    from storage.tablet import Tablet

MERGED = "\x00merged"  # the page cache's column slot for merged rows (never a column name)
MAX_SHARE = 16  # an entry may take at most 1/MAX_SHARE of the cache
KEPT_VERSIONS = 8  # merges kept per key: the newest and the seven before it
OLDER_SHARE = 256  # the seven older ones take at most 1/OLDER_SHARE of the cache


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
        hit = _at_or_before(cache.get(key), version)
        base, rest = _reusable(hit, schema, data, deletes, version)
    parts = tablet.scan_all(schema, rest, deletes, columns, predicates, stats) if rest else []
    if base is not None:
        stats.merged_base_rows += base.num_rows
    merged, state, rows = _merge_onto(tablet, schema, hit, base, parts, columns, aggregations)
    stats.rows_merged += rows - merged.num_rows
    if key is not None and version is not None:
        _keep(tablet, key, schema, _covered(data, deletes), merged, state)
    return merged


def _keep(tablet: Tablet, key: tuple, schema: TabletSchema, covered: int, merged: pa.Table,
         state) -> None:
    """Keep `merged` (versions up to `covered`) under `key`, the merges kept before it behind
    it (KEPT_VERSIONS in all, the older ones within 1/OLDER_SHARE of the cache); a later
    read's merge kept already stays."""
    cache = tablet.options.page_cache
    current = cache.get(key)
    if current is not None and current[0] is schema and current[1] >= covered:
        return
    size = _entry_size(merged, state)
    if size * MAX_SHARE > cache.capacity:
        return
    # the merges kept before it, newest first, while together they fit OLDER_SHARE of the
    # cache: a table of many large tablets keeps fewer of them, not fewer tablets' merges
    older, behind, budget = [], current, cache.capacity // OLDER_SHARE
    while behind is not None and behind[0] is schema and len(older) < KEPT_VERSIONS - 1:
        cost = _entry_size(behind[2], behind[3])
        if cost > budget:
            break
        older.append(behind[:4])
        budget -= cost
        size += cost
        behind = behind[4] if len(behind) > 4 else None
    chain = None
    for entry in reversed(older):
        chain = (*entry, chain)
    cache.put(key, (schema, covered, merged, state, chain), size)


def _at_or_before(entry, version: int | None):
    """The newest kept merge covering at most `version`: a read whose snapshot was taken just
    before another read kept a newer merge still finds one (readers of a table under a
    stream of loads hold snapshots a few versions apart)."""
    while entry is not None and version is not None and entry[1] > version:
        entry = entry[4] if len(entry) > 4 else None
    return entry


def _entry_size(merged: pa.Table, state) -> int:
    return merged.get_total_buffer_size() + (state.nbytes if state is not None else 0)


def _merge_onto(tablet: Tablet, schema: TabletSchema, hit, base: pa.Table | None,
               parts: list[pa.Table], columns: list[str],
               aggregations: dict[str, str]) -> tuple[pa.Table, object, int]:
    """(merged rows, their KeptKeys or None, rows merged) of the kept rows `base` (None:
    none) and the newer `parts`: folded in where storage/merge_into.py applies, else sorted
    and merged."""
    if base is not None:
        folded = _fold(hit, base, parts, schema, columns, aggregations)
        if folded is not None:
            return folded
        parts = [base, *parts]
    table = tablet.concat(parts, columns, schema)
    merged = merge_sorted(sort_by_key(table, schema.merge_order()), schema.key_names,
                          aggregations)
    return merged, None, table.num_rows


def _fold(hit, base: pa.Table, parts: list[pa.Table], schema: TabletSchema,
          columns: list[str], aggregations: dict[str, str]):
    """(merged rows, their KeptKeys, rows read) from the kept rows and the newer `parts`
    without sorting the kept rows again (storage/merge_into.py), or None where that path
    does not apply."""
    keys = schema.key_names
    if schema.merge_order() != keys or columns[:len(keys)] != keys:
        return None
    state = hit[3] if len(hit) > 3 else None
    if state is None:
        state = kept_keys(base, keys)
        if state is None:
            return None
    newer = pa.concat_tables(parts) if len(parts) > 1 else \
        parts[0] if parts else base.schema.empty_table()
    folded = fold_into(base, state, newer, keys, aggregations)
    if folded is None:
        return None
    return folded[0], folded[1], base.num_rows + newer.num_rows


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
    kept_schema, covered, rows = hit[:3]
    if kept_schema is not schema or covered > version:
        return None, data
    if any(v > covered for v, _ in deletes):
        return None, data  # a later DELETE removes rows the kept merge holds
    # `data` is a version path (ascending, no overlaps): the rowsets after the kept version
    # are a suffix, found from the end (a tablet under small loads holds hundreds of rowsets)
    first = len(data)
    while first and data[first - 1].start_version > covered:
        first -= 1
    if first and data[first - 1].end_version > covered:
        return None, data  # a compaction output spans the kept version
    return rows, data[first:]
