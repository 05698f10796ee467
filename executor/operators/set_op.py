"""UNION [ALL] / INTERSECT / EXCEPT over Arrow tables.

UNION ALL concatenates (after casting both sides to common column types); the distinct forms
tag each row with its side and group by every column (NULLs compare equal, as set operations
require): UNION keeps every group, INTERSECT the groups seen on both sides, EXCEPT the groups
seen only on the left.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from executor.operators.join import common_type


def _align(left: pa.Table, right: pa.Table) -> tuple[pa.Table, pa.Table]:
    fields = []
    for lf, rf in zip(left.schema, right.schema):
        if lf.type == rf.type or pa.types.is_null(rf.type):
            fields.append(pa.field(lf.name, lf.type))
        elif pa.types.is_null(lf.type):
            fields.append(pa.field(lf.name, rf.type))
        else:
            fields.append(pa.field(lf.name, common_type(lf.type, rf.type)))
    schema = pa.schema(fields)
    return left.cast(schema), right.rename_columns(left.column_names).cast(schema)


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
