"""LIMIT / OFFSET and DISTINCT."""

from __future__ import annotations

import pyarrow as pa


def run_limit(table: pa.Table, limit: int | None, offset: int) -> pa.Table:
    if limit is None:
        return table.slice(offset)
    return table.slice(offset, limit)


def run_distinct(table: pa.Table) -> pa.Table:
    """Rows made unique: a group-by on every column (NULLs equal, as DISTINCT wants)."""
    if table.num_rows <= 1:
        return table
    names = table.column_names
    return table.group_by(names, use_threads=False).aggregate([]).select(names)
