"""Sort and top-N with Doris's NULL order: NULLs first ascending, last descending, unless the
key says NULLS FIRST / NULLS LAST.

Arrow's sort takes one null placement for all keys, so each key is preceded by an `is_null`
key sorted the way that puts its NULLs where the key wants them. With a limit (ORDER BY ... LIMIT)
pyarrow's select_k_unstable would do top-N; it has the same single-placement limit, so top-N
sorts the indices and slices, which is still one vectorised pass.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from executor.expressions.errors import check_key_type


def run_sort(table: pa.Table, keys: list, limit: int | None) -> pa.Table:
    if table.num_rows <= 1:
        return table
    indices = sort_indices(table, keys)
    if limit is not None:
        indices = indices[:limit]
    return table.take(indices)


def sort_indices(table: pa.Table, keys: list) -> pa.Array:
    """Row order for `keys` (objects with .name, .descending and .nulls_at_start())."""
    columns: dict[str, pa.ChunkedArray] = {}
    sort_keys = []
    for i, k in enumerate(keys):
        col = table.column(k.name)
        check_key_type(col.type)
        if col.null_count:
            flag = f"__null{i}"
            columns[flag] = pc.is_null(col)
            # NULLs at the start: is_null descending (True first); at the end: ascending.
            sort_keys.append((flag, "descending" if k.nulls_at_start() else "ascending"))
        key = f"__key{i}"
        columns[key] = col
        sort_keys.append((key, "descending" if k.descending else "ascending"))
    return pc.sort_indices(pa.table(columns), sort_keys=sort_keys)
