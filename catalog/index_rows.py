"""The rows one materialized index stores, made from the base table's rows.

A rollup stores a subset of the base columns (its tablet's memtable picks them, sorts and
aggregates them by the rollup's own keys). A synchronous materialized view may also store
columns the base lacks, computed from a base column (`MaterializedIndexMeta.define_exprs`):

    count  mv_count_<col> BIGINT SUM: 1 where <col> is not NULL, else 0 (COUNT(col) = SUM)

`index_rows` adds those columns to a batch of base rows (vectorised); every load path and the
ADD ROLLUP job call it once per index.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from catalog.model import MaterializedIndexMeta, OlapTable


def source_columns(table: OlapTable, index: MaterializedIndexMeta) -> list[str]:
    """The base columns the index's rows are made of."""
    out = []
    for name in index.columns:
        src = index.define_exprs[name][1] if name in index.define_exprs else name
        if src not in out:
            out.append(table.column(src).name)
    return out


def index_rows(table: OlapTable, index: MaterializedIndexMeta, rows: pa.Table) -> pa.Table:
    """`rows` (base columns) with the index's computed columns added."""
    for name, (kind, src) in index.define_exprs.items():
        if kind != "count":
            raise ValueError(f"Unknown materialized view column kind {kind!r}")
        arr = pc.cast(pc.is_valid(rows.column(src)), pa.int64())
        rows = rows.append_column(name, arr)
    return rows
