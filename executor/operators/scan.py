"""OlapScan: read the scan's tablets at their snapshot versions, in parallel, as one table.

Each tablet is read by a pool thread (pyarrow and the segment decoder release the GIL); storage
applies the pushed-down predicates (pruning with its indexes) and merges rows by the table's
model. Columns come back renamed to the scan's internal names.
"""

from __future__ import annotations

import pyarrow as pa

from executor.env import ExecEnv
from storage import ScanStats


def run_scan(node, env: ExecEnv) -> pa.Table:
    columns = list(node.columns)
    schema = pa.schema([pa.field(o, node.column_types[c].arrow())
                        for c, o in zip(node.columns, node.output)])

    def read(st) -> tuple[pa.Table, ScanStats]:
        stats = ScanStats()
        tablet = env.engine.get_tablet(st.tablet_id)
        return tablet.read(st.version, columns, list(node.predicates), stats), stats

    parts = list(env.pool.map(read, node.tablets)) if len(node.tablets) > 1 else [read(t) for t in node.tablets]
    tables = []
    for table, stats in parts:
        env.scan_stats.merge(stats)
        if table.num_rows:
            tables.append(table.rename_columns(node.output).cast(schema))
    if not tables:
        return schema.empty_table()
    return pa.concat_tables(tables)
