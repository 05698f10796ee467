"""The hidden `__DORIS_VERSION_COL__` of Unique tables: the version that loaded each row.

Doris fills it with the version the row was published at (its regression outputs show 2 for the
first load, 3 for the next). A load writes its rows before it has a version, so its segments
hold 0 there; a read of a rowset of a single version ([v, v]: a load, never compacted) gives
the column as v instead (`scan`), predicates on it included. Compaction reads its inputs so,
and writes the values it read: a compacted rowset [a, b] holds each row's own version.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pyarrow as pa

from storage.predicate import ColumnPredicate, prepare
from storage.row_filter import combined_mask
from storage.rowset import RowsetMeta
from storage.schema import VERSION_COL, TabletSchema


def reads_version(columns: list[str], predicates: list[ColumnPredicate]) -> bool:
    """Whether a scan reads or tests the version column (else `applies` is false for every
    rowset)."""
    return VERSION_COL in columns or any(p.column == VERSION_COL for p in predicates)


def applies(schema: TabletSchema, rowset: RowsetMeta, columns: list[str],
            predicates: list[ColumnPredicate]) -> bool:
    """The scan reads (or tests) the version column of a single-version rowset."""
    if rowset.start_version != rowset.end_version or rowset.end_version is None:
        return False
    return reads_version(columns, predicates) and schema.has_column(VERSION_COL)


def scan(read: Callable[..., pa.Table], schema: TabletSchema, rowset: RowsetMeta, deletes: list,
         columns: list[str], predicates: list[ColumnPredicate], stats) -> pa.Table:
    """`read(schema, rowset, deletes, columns, predicates, stats)` with the version column
    given as the rowset's version and the predicates on it applied to that value."""
    own = [p for p in predicates if p.column == VERSION_COL]
    table = read(schema, rowset, deletes, columns,
                 [p for p in predicates if p.column != VERSION_COL], stats)
    version = pa.array(np.full(table.num_rows, rowset.end_version, dtype=np.int64))
    if VERSION_COL in columns:
        table = table.set_column(columns.index(VERSION_COL), VERSION_COL, version)
    if own:
        mask = combined_mask([prepare(p, schema.column(VERSION_COL).type) for p in own],
                             {VERSION_COL: version})
        table = table.filter(mask)
    return table
