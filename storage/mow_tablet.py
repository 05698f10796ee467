"""A merge-on-write tablet's delete bitmap through publishes, compactions and restarts.

storage/mow.py computes entries; this module decides when, for a `Tablet` whose schema has
`merge_on_write`:

    prepare(tablet, meta, version)  before the publish is journaled (catalog.publish, under the
                                    table's load lock): the entries publishing `meta` at
                                    `version` adds, stored in `meta.delete_bitmap` so that the
                                    journal entry carries them (atomic with the version)
    on_publish(tablet, meta, v)     the entries to add when `meta` becomes visible: the
                                    prepared ones, those the journaled meta carries (a restart
                                    restores them so), or computed now (a rowset published
                                    without them: an older data directory, a schema change's
                                    history rowset)
    recompute(tablet)               the whole bitmap again from the rowsets in version order
                                    (a rowset published below newer ones; a schema that starts
                                    merging on write); deterministic, so a restart agrees
    compact_rows(tablet, inputs)    a compaction's output rows: the inputs' live rows at the
                                    output's end version, sorted by key, and each one's input
                                    ordinal (the rowid conversion)
    carry(tablet, output, inputs)   at the swap (table lock held): the entries the output
                                    carries: the inputs' entries of later versions converted to
                                    the output's rows (loads published during the compaction
                                    included), and the entries the inputs' publishes made on
                                    older rowsets that stay
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from storage.column_mapping import delete_conjunctions
from storage.delete_bitmap import decode_entries, encode_entries, Entry
from storage.memtable import sort_by_key
from storage.mow import calc_delete_bitmap, convert, live_mask, POS
from storage.rowset import RowsetMeta
from storage.schema import DELETE_SIGN, TabletSchema
from storage.stats import ScanStats

if TYPE_CHECKING:
    from storage.tablet import Tablet


def applies(schema: TabletSchema, meta: RowsetMeta) -> bool:
    return schema.merge_on_write and not meta.is_delete and meta.num_rows > 0


def _compute(tablet: Tablet, meta: RowsetMeta, version: int,
             older: list[RowsetMeta]) -> list[Entry]:
    schema = tablet.schema
    return calc_delete_bitmap(tablet, schema, meta, version, older, tablet.delete_bitmap,
                              delete_conjunctions(older, schema))


def prepare(tablet: Tablet, meta: RowsetMeta, version: int) -> None:
    """Compute `meta`'s entries now (see the module docstring); a no-op for other tablets."""
    if not applies(tablet.schema, meta):
        return
    published = tablet.rowsets()
    if published and published[-1].end_version >= version:
        return  # published below newer versions: recomputed whole at publish
    entries = _compute(tablet, meta, version, published)
    meta.delete_bitmap = encode_entries(entries)
    tablet.prepared_bitmaps[meta.rowset_id] = (tablet.generation, entries)


def on_publish(tablet: Tablet, meta: RowsetMeta, start: int, version: int,
               older: list[RowsetMeta]) -> list[Entry] | None:
    """The entries for appending `meta` at [start, version] after `older` (the published
    list), or None when the whole bitmap must be recomputed (`meta` lands below newer
    versions)."""
    if older and older[-1].end_version >= start:
        return None
    prepared = tablet.prepared_bitmaps.pop(meta.rowset_id, None)
    if prepared is not None:
        entries = prepared[1] if prepared[0] == tablet.generation else \
            _compute(tablet, meta, version, older)  # the tablet changed since: again
    elif meta.delete_bitmap is not None:
        entries = decode_entries(meta.delete_bitmap)
    else:
        entries = _compute(tablet, meta, version, older)
        meta.delete_bitmap = encode_entries(entries)
    live = {r.rowset_id for r in older} | {meta.rowset_id}
    return [e for e in entries if e.rowset_id in live]


def recompute(tablet: Tablet) -> None:
    """The delete bitmap from scratch: each published rowset in version order against the ones
    before it (a compaction output's rows are already one per key)."""
    tablet.delete_bitmap.clear()
    if not tablet.schema.merge_on_write:
        return
    published = tablet.rowsets()
    for i, rs in enumerate(published):
        if applies(tablet.schema, rs):
            entries = _compute(tablet, rs, rs.end_version, published[:i])
            tablet.delete_bitmap.add(entries)


def compact_rows(tablet: Tablet, schema: TabletSchema, inputs: list[RowsetMeta],
                 base: bool) -> tuple[pa.Table, np.ndarray]:
    """The output's rows (flushed order) and each one's input ordinal (inputs' rows numbered
    in order, delete rowsets having none)."""
    end = inputs[-1].end_version
    deletes = delete_conjunctions(inputs, schema)
    names = schema.names
    parts, offset = [], 0
    for rs in inputs:
        if rs.num_rows == 0 or rs.is_delete:
            continue
        rows = tablet.scan_rowset(schema, rs, [], names, [], ScanStats())
        keep = live_mask(tablet, schema, rs, rows, tablet.delete_bitmap, end, deletes)
        source = np.arange(offset, offset + rs.num_rows, dtype=np.int64)[keep]
        parts.append(rows.filter(pa.array(keep)).append_column(POS, pa.array(source)))
        offset += rs.num_rows
    if not parts:
        empty = tablet.concat([], names, schema)
        return empty, np.zeros(0, np.int64)
    table = sort_by_key(pa.concat_tables(parts), [*schema.key_names, POS])
    if base and schema.has_delete_sign and table.num_rows:
        # from the first version: a deleted key has nothing older left to hide
        table = table.filter(pc.not_equal(table.column(DELETE_SIGN), 1))
    source = table.column(POS).to_numpy()
    return table.drop_columns([POS]), source


def carry(tablet: Tablet, output: RowsetMeta, inputs: list[RowsetMeta]) -> None:
    """Set `output.delete_bitmap` to the entries it carries (see the module docstring)."""
    conversion = tablet.conversions.pop(output.rowset_id, None)
    if conversion is None:
        return
    data = [r for r in inputs if r.num_rows and not r.is_delete]
    ids = {r.rowset_id for r in inputs}
    live = {r.rowset_id for r in tablet.rowsets()} - ids
    entries = convert(data, output.end_version, output, conversion, tablet.delete_bitmap)
    kept = [e for r in inputs for e in (r.delete_bitmap or []) if int(e[0]) in live]
    output.delete_bitmap = encode_entries(entries) + kept
