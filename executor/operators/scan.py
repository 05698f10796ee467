"""OlapScan: read the scan's tablets at their snapshot versions, in parallel, as one table.

Each tablet is read by a pool thread (pyarrow and the segment decoder release the GIL); storage
applies the pushed-down predicates (pruning with its indexes) and merges rows by the table's
model. Columns come back renamed to the scan's internal names.
"""

from __future__ import annotations

import pyarrow as pa

from executor.env import ExecEnv
from storage import ScanStats


def scan_schema(node) -> pa.Schema:
    return pa.schema([pa.field(o, node.column_types[c].arrow())
                      for c, o in zip(node.columns, node.output)])


def read_tablet(node, st, env: ExecEnv, schema: pa.Schema) -> tuple[pa.Table, ScanStats]:
    """One tablet's rows at its snapshot version, renamed to the scan's internal names, with
    the tablet's scan counters (merged by the caller's thread: no shared counters here)."""
    stats = ScanStats()
    if st.snapshot is not None:  # captured at bind time (storage/snapshot.py)
        table = st.snapshot.read(list(node.columns), list(node.predicates), stats)
    else:
        table = env.engine.get_tablet(st.tablet_id).read(st.version, list(node.columns),
                                                         list(node.predicates), stats)
    table = table.rename_columns(node.output)
    return (table if table.schema.equals(schema) else table.cast(schema)), stats


def run_scan(node, env: ExecEnv) -> pa.Table:
    schema = scan_schema(node)
    if len(node.tablets) > 1:
        parts = list(env.pool.map(lambda st: read_tablet(node, st, env, schema), node.tablets))
    else:
        parts = [read_tablet(node, st, env, schema) for st in node.tablets]
    for _, stats in parts:
        env.scan_stats.merge(stats)
    tables = [t for t, _ in parts if t.num_rows]
    if not tables:
        return schema.empty_table()
    return pa.concat_tables(tables)
