"""The columns a join or filter passes up (planner/prune_join_outputs.py decides which).

A table is never cut to zero columns: Arrow's concat, take and slice of a column-less table
lose its row count, which `count(*)` above still needs, so the first column stays then.
"""

from __future__ import annotations

import pyarrow as pa


def kept(names: list[str], keep: frozenset | None) -> list[str] | None:
    """The names of `names` to keep, in order; None when all of them stay."""
    if keep is None or keep.issuperset(names):
        return None
    chosen = [c for c in names if c in keep]
    return chosen or names[:1]


def keep_columns(table: pa.Table, keep: frozenset | None) -> pa.Table:
    chosen = kept(table.column_names, keep)
    return table if chosen is None else table.select(chosen)
