"""Partial column updates of merge-on-write Unique tables (`SET
enable_unique_key_partial_update = true` for INSERT; Stream Load's `partial_columns: true`).

The load names only some columns. For each row whose key exists, the columns it leaves out
keep the key's current values; for a new key they take their default or NULL, and a left-out
column with neither fails the load with the BE's message ("the unmentioned column `c` should
have default value or be nullable for newly inserted rows in non-strict mode partial update").
Doris looks the keys up in the primary key index while writing; here the current rows of the
table are read at their published versions (key and left-out columns only) and joined to the
load with one Arrow hash join, before the ordinary load path (`catalog/load.py`) runs. The
rows then replace whole rows as any Unique load does. Tables that are not merge-on-write, and
loads that name every column or miss a key column, load as usual.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from catalog.catalog import Catalog
from catalog.errors import DataQualityError
from catalog.hidden_columns import has_delete_sign
from catalog.model import OlapTable
from catalog.unique_model import is_merge_on_write
from catalog.values import parse_value
from storage import ColumnPredicate, ScanStats
from storage.schema import DELETE_SIGN


def complete_partial_columns(catalog: Catalog, db_name: str | None, table_name: str,
                             data: pa.Table) -> pa.Table:
    """`data` with every column of the table, left-out ones from the current rows."""
    with catalog.lock:
        table = catalog.get_table(db_name, table_name)
        given = {n.lower() for n in data.column_names}
        keys = [c.name for c in table.key_columns]
        missing = [c for c in table.columns if c.name.lower() not in given]
        if not is_merge_on_write(table) or not missing \
                or any(k.lower() not in given for k in keys):
            return data
        tablets = [(catalog.engine.get_tablet(tid), p.visible_version)
                   for p in table.sorted_partitions() for tid in p.tablets_by_index[
                       table.base_index_id]]
    data = data.rename_columns([next(c.name for c in table.columns if c.name.lower() == n.lower())
                                for n in data.column_names])
    wanted = keys + [c.name for c in missing]
    # a key whose latest row carries the delete sign is not there: a new row (defaults)
    live = [ColumnPredicate(DELETE_SIGN, "=", (0,))] if has_delete_sign(table) else []
    parts = [t.read(v, wanted, live, ScanStats()) for t, v in tablets]
    current = pa.concat_tables(parts) if parts else pa.table(
        {c: pa.array([], table.column(c).type.arrow()) for c in wanted})
    current = current.append_column("__found", pa.repeat(pa.scalar(True), current.num_rows))
    cast_keys = data.select(keys).cast(current.select(keys).schema)
    probe = pa.table({**{k: cast_keys.column(k) for k in keys},
                      "__row": pa.array(range(data.num_rows), pa.int64())})
    joined = probe.join(current, keys, join_type="left outer").sort_by("__row")
    found = pc.fill_null(joined.column("__found"), False)
    out = data
    for col in missing:
        out = out.append_column(col.name, _fill_new_rows(table, col, joined.column(col.name),
                                                         found))
    return out


def _fill_new_rows(table: OlapTable, col, values: pa.ChunkedArray, found) -> pa.ChunkedArray:
    new_rows = pc.invert(found)
    if not pc.any(new_rows).as_py():
        return values
    if col.default is not None and col.default != "CURRENT_TIMESTAMP":
        default = pa.scalar(parse_value(col.type, col.default), col.type.arrow())
        return pc.if_else(new_rows, default, values)
    if col.nullable or col.auto_increment:
        return values
    raise DataQualityError(f"the unmentioned column `{col.name}` should have default value or "
                           "be nullable for newly inserted rows in non-strict mode partial update")
