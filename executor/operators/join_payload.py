"""Nested columns (ARRAY, MAP, STRUCT) through Acero's hash join, which carries none of them.

Arrow's hash join node refuses a non-key field of a nested type ("Data type list<item: int32>
is not supported in join non-key field"; pyarrow 26 refuses lists and maps too, where earlier
versions refused only structs). Such columns leave each side before the join, an int64 row id
column stands in for them, and after the join they are taken back by those ids (a
null-extended row's id is NULL, so its values are NULL).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

PARKED = "__parked_rid"


def needs_parking(t: pa.DataType) -> bool:
    """Whether Acero's hash join cannot carry a column of type `t` (any nested type)."""
    return pa.types.is_nested(t)


def park(table: pa.Table, side: str, keep: list[str]) -> tuple[pa.Table, pa.Table | None]:
    """(`table` without its nested columns but with a row id column `__parked_rid<side>`,
    the nested columns) - or `table` and None when it has none (`keep`: the join keys)."""
    names = [f.name for f in table.schema if needs_parking(f.type) and f.name not in keep]
    if not names:
        return table, None
    parked = table.select(names)
    rid = pa.array(np.arange(table.num_rows, dtype=np.int64))
    return table.drop_columns(names).append_column(PARKED + side, rid), parked


def unpark(out: pa.Table, side: str, parked: pa.Table | None) -> pa.Table:
    """The joined rows with the side's nested columns taken back by their row ids."""
    name = PARKED + side
    if parked is None or name not in out.column_names:
        return out
    ids = out.column(name)
    out = out.drop_columns([name])
    for column_name in parked.column_names:
        out = out.append_column(column_name, parked.column(column_name).take(ids))
    return out
