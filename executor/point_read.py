"""The read of a short-circuit point query (planner/short_circuit.py): the captured tablets of
one key lookup read in the caller's thread, one after another (usually one tablet: the key's
partition and bucket), with the key predicates pushed into storage (short key index), the
snapshots released at the end. No pipeline, no pool task: the result is a handful of rows."""

from __future__ import annotations

import pyarrow as pa

from storage import ScanStats
from storage.point_lookup import lookup


def read_point(snapshots: list, columns: list[str], predicates: list,
               schema: pa.Schema) -> pa.Table:
    """The rows of `snapshots` (storage.TabletSnapshot) matching `predicates`, `columns` read
    and returned under `schema`'s names and types; every snapshot is released."""
    try:
        parts = []
        for snapshot in snapshots:
            stats = ScanStats()
            part = lookup(snapshot, columns, predicates, stats)
            if part is None:  # not a plain sorted-key search: the snapshot's usual read
                part = snapshot.read(list(columns), list(predicates), stats)
            if not part.schema.equals(schema):
                part = pa.Table.from_arrays(part.columns, schema=schema) \
                    if part.schema.types == schema.types else \
                    part.rename_columns(schema.names).cast(schema)
            parts.append(part)
    finally:
        for snapshot in snapshots:
            snapshot.release()
    if not parts:
        return schema.empty_table()
    return parts[0] if len(parts) == 1 else pa.concat_tables(parts)
