"""UNION [ALL] / INTERSECT / EXCEPT over Arrow tables.

UNION ALL concatenates (after casting both sides to common column types); the distinct forms
tag each row with its side and group by every column (NULLs compare equal, as set operations
require): UNION keeps every group, INTERSECT the groups seen on both sides, EXCEPT the groups
seen only on the left.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from executor.expressions.casts import cast_value, kind
from executor.operators.join import common_type


def set_op_type(a: pa.DataType, b: pa.DataType) -> pa.DataType:
    """The type a column of a set operation takes from its two sides' types, as Doris's
    assignment-compatible type: a NULL side takes the other's; BOOLEAN with a number is that
    number (TRUE -> 1); a number, date or datetime with a string is a string; otherwise the
    common type of the two (DATE with DATETIME a DATETIME, INT with DOUBLE a DOUBLE, ...)."""
    if a == b or pa.types.is_null(b):
        return a
    if pa.types.is_null(a):
        return b
    if pa.types.is_boolean(a) or pa.types.is_boolean(b):
        other = b if pa.types.is_boolean(a) else a
        if kind(other) in ("int", "float", "decimal"):
            return set_op_type(pa.decimal128(1, 0) if kind(other) == "decimal" else pa.int8(),
                               other)
    if kind(a) == "string" or kind(b) == "string":
        return pa.string()
    return common_type(a, b)


def _as_type(table: pa.Table, types: list[pa.DataType]) -> pa.Table:
    """Each column of `table` cast to its type, with Doris's CAST (1.50 -> '1.50')."""
    columns = [col if col.type == t else
               pa.chunked_array([cast_value(c, t) for c in col.chunks], t)
               for col, t in zip(table.columns, types)]
    return pa.Table.from_arrays(columns, names=table.column_names)


def _align(left: pa.Table, right: pa.Table) -> tuple[pa.Table, pa.Table]:
    types = [set_op_type(lf.type, rf.type) for lf, rf in zip(left.schema, right.schema)]
    return _as_type(left, types), _as_type(right.rename_columns(left.column_names), types)


def run_set_op(left: pa.Table, right: pa.Table, kind: str, distinct: bool) -> pa.Table:
    left, right = _align(left, right)
    if kind == "union" and not distinct:
        return pa.concat_tables([left, right])
    names = left.column_names
    tagged = pa.concat_tables([
        left.append_column("__side", pa.array([0] * left.num_rows, pa.int8())),
        right.append_column("__side", pa.array([1] * right.num_rows, pa.int8())),
    ])
    groups = tagged.group_by(names, use_threads=False).aggregate(
        [("__side", "min"), ("__side", "max")])
    if kind == "intersect":
        groups = groups.filter(pc.and_(pc.equal(groups["__side_min"], 0),
                                       pc.equal(groups["__side_max"], 1)))
    elif kind == "except":
        groups = groups.filter(pc.equal(groups["__side_max"], 0))
    return groups.select(names)
