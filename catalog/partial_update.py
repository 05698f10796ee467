"""Partial column updates of merge-on-write Unique tables (`SET
enable_unique_key_partial_update = true` for INSERT; Stream Load's `partial_columns: true`).

The load names only some columns. For each row whose key exists, the columns it leaves out
keep the key's current values; for a new key they take their default or NULL, and a left-out
column with neither fails the load with the BE's message ("the unmentioned column `c` should
have default value or be nullable for newly inserted rows in non-strict mode partial update").
Doris looks the keys up in the primary key index while writing; here the current rows of the
table are read at their published versions (key and left-out columns only) and joined to the
load with one Arrow hash join, before the ordinary load path (`catalog/load.py`) runs. The
rows then replace whole rows as any Unique load does. Loads that name every column load as
usual; Doris's checks first (StreamLoadPlanner, BindSink):

    a table that is not merge-on-write    Stream Load: "Only unique key merge on write support
                                          partial update"; INSERT ignores the variable
    a key column left out                 "Partial update should include all key columns,
                                          missing: k"
    a hidden column other than the        "Partial update should not include invisible column
    delete sign (and sequence column)     except delete sign column: c"
    a new key in strict mode              the row is filtered (the BE's segment writer): an
                                          INSERT (strict by default) fails "Insert has filtered
                                          data in strict mode", a Stream Load with strict_mode
                                          counts it among the filtered rows
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from dataclasses import dataclass

from catalog.catalog import Catalog
from catalog.errors import AnalysisError, DataQualityError
from catalog.hidden_columns import has_delete_sign
from catalog.model import OlapTable
from catalog.unique_model import is_merge_on_write
from catalog.values import parse_value
from storage import ScanStats
from storage.schema import DELETE_SIGN, SEQUENCE_COL

NEW_KEY_STRICT = "the key does not exist in the table: a strict mode partial update only " \
    "updates rows"


@dataclass
class PartialRows:
    rows: pa.Table         # every column of the table
    new_keys_dropped: int  # rows of new keys filtered in strict mode


def complete_partial_columns(catalog: Catalog, db_name: str | None, table_name: str,
                             data: pa.Table, strict: bool = False,
                             stream_load: bool = False) -> PartialRows:
    """`data` with every column of the table, left-out ones from the current rows; in
    strict mode without the rows of keys the table does not hold."""
    with catalog.lock:
        table = catalog.get_table(db_name, table_name)
        if not is_merge_on_write(table):
            if stream_load:
                raise AnalysisError("Only unique key merge on write support partial update")
            return PartialRows(data, 0)
        visible = {c.name.lower(): c.name for c in table.columns}
        hidden = {n.lower(): n for n in (DELETE_SIGN, SEQUENCE_COL)}
        for n in data.column_names:
            if n.lower() not in visible and n.lower() not in hidden \
                    and table.column(n) is None and n.startswith("__DORIS_"):
                raise AnalysisError("Partial update should not include invisible column "
                                    f"except delete sign column: {n}")
        given = {n.lower() for n in data.column_names}
        keys = [c.name for c in table.key_columns]
        for k in keys:
            if k.lower() not in given:
                raise AnalysisError(f"Partial update should include all key columns, "
                                    f"missing: {k}")
        missing = [c for c in table.columns if c.name.lower() not in given]
        if not missing:
            return PartialRows(data, 0)
        tablets = [(catalog.engine.get_tablet(tid), p.visible_version)
                   for p in table.sorted_partitions() for tid in p.tablets_by_index[
                       table.base_index_id]]
    data = data.rename_columns([visible.get(n.lower(), hidden.get(n.lower(), n))
                                for n in data.column_names])
    wanted = keys + [c.name for c in missing]
    # a key whose latest row carries the delete sign is in the table (strict mode takes it)
    # but its values are gone: the row takes defaults, as a new key's
    signed = has_delete_sign(table)
    parts = [t.read(v, wanted + ([DELETE_SIGN] if signed else []), [], ScanStats())
             for t, v in tablets]
    current = pa.concat_tables(parts) if parts else pa.table(
        {c: pa.array([], table.column(c).type.arrow()) for c in wanted})
    live = pc.equal(current.column(DELETE_SIGN), 0) if signed and current.num_rows \
        else pa.repeat(pa.scalar(True), current.num_rows)
    current = current.select(wanted).append_column("__present", pa.repeat(
        pa.scalar(True), current.num_rows)).append_column("__found", live)
    cast_keys = data.select(keys).cast(current.select(keys).schema)
    probe = pa.table({**{k: cast_keys.column(k) for k in keys},
                      "__row": pa.array(range(data.num_rows), pa.int64())})
    joined = probe.join(current, keys, join_type="left outer").sort_by("__row")
    found = pc.fill_null(joined.column("__found"), False)
    present = pc.fill_null(joined.column("__present"), False)
    dropped = 0
    if strict and not pc.all(present).as_py():
        dropped = data.num_rows - pc.sum(present).as_py()
        data, joined, found = data.filter(present), joined.filter(present), found.filter(present)
    out = data
    for col in missing:
        out = out.append_column(col.name, _fill_new_rows(table, col, joined.column(col.name),
                                                         found))
    return PartialRows(out, dropped)


def _fill_new_rows(table: OlapTable, col, values: pa.ChunkedArray, found) -> pa.ChunkedArray:
    new_rows = pc.invert(found)
    if not pc.any(new_rows).as_py():
        return values
    if col.default is not None and col.default != "CURRENT_TIMESTAMP":
        default = pa.scalar(parse_value(col.type, col.default), col.type.arrow())
        return pc.if_else(new_rows, default, values)
    if col.nullable or col.auto_increment:  # NULL (a deleted key's old value must not stay)
        return pc.if_else(new_rows, pa.scalar(None, values.type), values)
    raise DataQualityError(f"the unmentioned column `{col.name}` should have default value or "
                           "be nullable for newly inserted rows in non-strict mode partial update")
