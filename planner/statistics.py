"""Table statistics for planning: rows and average row size from the published rowsets.

The catalog journals every published rowset with its row count and data size; summing them over
the tablets a scan reads gives its cardinality and bytes without touching storage. For
Aggregate/Unique tables rows from different loads are counted before merging: an upper bound,
which is what a cost model wants.
"""

from __future__ import annotations

from dataclasses import dataclass

from catalog.model import OlapTable, Partition


@dataclass
class ScanStatistics:
    rows: int
    data_size: int
    tablets_total: int
    tablets_with_data: int
    partitions_with_data: int
    backends: int

    @property
    def avg_row_size(self) -> float:
        return self.data_size / self.rows if self.rows else 0.0


def _partition_rows(p: Partition, tablet_ids: list[int]) -> tuple[int, int, int, set[int]]:
    rows = size = with_data = 0
    backends: set[int] = set()
    for tid in tablet_ids:
        meta = p.tablets[tid]
        t_rows = sum(r["meta"]["num_rows"] for r in meta.rowsets if r["version"] <= p.visible_version)
        t_size = sum(r["meta"]["data_size"] for r in meta.rowsets if r["version"] <= p.visible_version)
        rows += t_rows
        size += t_size
        if t_rows:
            with_data += 1
            backends.add(meta.replicas[0])
    return rows, size, with_data, backends


def scan_statistics(table: OlapTable, partition_ids: list[int], index_id: int) -> ScanStatistics:
    """Statistics of reading `index_id` of the given partitions (call under the catalog lock)."""
    rows = size = total = with_data = parts = 0
    backends: set[int] = set()
    for pid in partition_ids:
        p = table.partitions[pid]
        tablet_ids = p.tablets_by_index.get(index_id, [])
        r, s, w, b = _partition_rows(p, tablet_ids)
        rows, size, with_data = rows + r, size + s, with_data + w
        total += len(tablet_ids)
        parts += 1 if r else 0
        backends |= b
    return ScanStatistics(rows, size, total, with_data, parts, len(backends))
