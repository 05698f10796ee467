"""Reading rowsets written under an older tablet schema (Doris's light schema change).

A light schema change (ADD / DROP / RENAME COLUMN, catalog/schema_change.py) only gives the
tablet a new schema; rowsets keep the columns they were written with. Columns are matched by
Doris's column unique id, never by name:

    RowsetMeta.column_ids       stored name -> unique id when the rowset was written (None: the
                                schema had no ids yet; then TabletSchema.origin_names, the
                                names at the table's first schema change, stand in)
    rowset_columns(schema, rs)  current name -> stored name, or None when the rowset lacks the
                                column (added later: read as its DEFAULT, or NULL); None as a
                                whole when the rowset is stored exactly as the schema says
    delete_conjunctions(...)    each DELETE's predicates renamed to current names (a column
                                dropped since is `\\0<uid>`, matched by id in older rowsets)
    read_mapped(...)            one rowset's rows under the current schema: predicates and
                                DELETEs on stored columns pushed down under the stored names,
                                missing columns filled with defaults, the rest evaluated after

Dropped columns are simply never asked for; compaction reads through this module, so its
output is written in the current schema.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from storage.arrays import contiguous
from storage.predicate import ColumnPredicate, prepare
from storage.row_filter import row_mask
from storage.rowset import RowsetMeta
from storage.schema import TabletColumn, TabletSchema
from storage.stats import ScanStats

if TYPE_CHECKING:
    from storage.tablet import Tablet

DROPPED = "\0"  # prefix of a delete predicate's column that the current schema lacks


def _stored_ids(schema: TabletSchema, rowset: RowsetMeta) -> dict[str, int] | None:
    if rowset.column_ids is not None:
        return rowset.column_ids
    if schema.origin_names:
        return {name: uid for uid, name in schema.origin_names.items()}
    return None


def rowset_columns(schema: TabletSchema, rowset: RowsetMeta) -> dict[str, str | None] | None:
    """current name -> stored name (None: not in the rowset); None if nothing differs."""
    current = schema.column_ids()
    if current is None:
        return None  # no schema change ever: names are what they always were
    stored = _stored_ids(schema, rowset)
    if stored == current:
        return None
    by_id = {uid: name for name, uid in (stored or {}).items()}
    out: dict[str, str | None] = {}
    for c in schema.columns:
        if c.unique_id < 0:  # a materialized view's computed column: by name
            out[c.name] = c.name
        else:
            out[c.name] = by_id.get(c.unique_id) if stored is not None else c.name
    return out


def delete_conjunctions(rowsets: list[RowsetMeta], schema: TabletSchema | None = None
                        ) -> list[tuple[int, list[ColumnPredicate]]]:
    """(version, conjunction) of every delete rowset among `rowsets`, in current names."""
    out = []
    for r in rowsets:
        if not r.is_delete:
            continue
        conj = [ColumnPredicate.from_dict(d) for d in r.delete_predicate]
        stored = _stored_ids(schema, r) if schema is not None else None
        if stored is not None:
            names = {c.unique_id: c.name for c in schema.columns if c.unique_id >= 0}
            conj = [replace(p, column=names.get(stored[p.column], f"{DROPPED}{stored[p.column]}"))
                    if p.column in stored else p for p in conj]
        out.append((r.start_version, conj))
    return out


def needs_mapping(mapping: dict | None, deletes: list) -> bool:
    return mapping is not None or any(p.column.startswith(DROPPED)
                                      for _, conj in deletes for p in conj)


def read_mapped(tablet: Tablet, schema: TabletSchema, rowset: RowsetMeta, deletes: list,
                columns: list[str], predicates: list[ColumnPredicate],
                stats: ScanStats, keep=lambda segment_no, num_rows: None) -> pa.Table:
    """One rowset's rows in the current schema's names (see the module docstring);
    `keep(segment_no, num_rows)`: the rows a merge-on-write delete bitmap leaves (bool mask)."""
    mapping = rowset_columns(schema, rowset) or {c.name: c.name for c in schema.columns}
    stored = _stored_ids(schema, rowset) or {}
    by_id = {uid: name for name, uid in stored.items()}

    def stored_name(column: str) -> str | None:
        if column.startswith(DROPPED):
            return by_id.get(int(column[1:]))
        return mapping.get(column)

    later = [conj for v, conj in deletes if v > rowset.end_version]
    pushed = [p for p in predicates if stored_name(p.column) is not None]
    kept = [p for p in predicates if stored_name(p.column) is None]
    push_deletes = [c for c in later if all(stored_name(p.column) for p in c)]
    kept_deletes = [c for c in later if not all(stored_name(p.column) for p in c)]
    wanted = list(dict.fromkeys([*columns, *(p.column for p in kept),
                                 *(p.column for c in kept_deletes for p in c
                                   if not p.column.startswith(DROPPED))]))
    read = [stored_name(c) for c in wanted if stored_name(c) is not None]
    parts = [seg.scan(read, [replace(p, column=stored_name(p.column)) for p in pushed], stats,
                      [[replace(p, column=stored_name(p.column)) for p in c]
                       for c in push_deletes], None, keep(segment_no, seg.num_rows))
             for segment_no, seg in enumerate(tablet._segments(rowset))]
    n = sum(t.num_rows for t in parts)
    arrays = {}
    for c in wanted:
        s = stored_name(c)
        if s is None:
            arrays[c] = default_array(schema.column(c), n)
        else:
            arrays[c] = contiguous(pa.chunked_array(
                [chunk for t in parts for chunk in t.column(s).chunks],
                schema.column(c).type.arrow()))
    mask = None
    if kept:
        mask = row_mask([prepare(p, schema.column(p.column).type) for p in kept],
                        arrays.__getitem__, n)
    for conj in kept_deletes:
        if any(p.column.startswith(DROPPED) and stored_name(p.column) is None for p in conj):
            continue  # a column added after these rows and dropped since: never matched
        hit = row_mask([prepare(p, schema.column(p.column).type) for p in conj],
                       arrays.__getitem__, n)
        mask = ~hit if mask is None else mask & ~hit
    table = pa.table({c: arrays[c] for c in columns}) if columns else \
        pa.table({"_": pa.nulls(n)}).select([])
    return table.filter(pa.array(mask)) if mask is not None else table


def default_array(column: TabletColumn, n: int) -> pa.Array:
    """`n` copies of the column's DEFAULT (NULL when it has none or it does not convert)."""
    arrow = column.type.arrow()
    value = None
    if column.default is not None and column.default.upper() != "NULL":
        try:
            value = pa.scalar(column.default).cast(arrow).as_py()
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError):
            value = None
    if value is None:
        return pa.nulls(n, arrow)
    return pc.take(pa.array([value], arrow), pa.array(np.zeros(n, dtype=np.int32)))
