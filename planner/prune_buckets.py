"""Rule: bucket pruning. Equality or IN on every hash distribution column of a scan picks the
buckets those values hash to (the same `storage.bucket_ids` that routed the rows at load), so
only those tablets are read: a point lookup reads one tablet per partition, as in Doris.

Runs after WHERE conjuncts became storage predicates on each scan (`planner.pushdown`); at most
`MAX_COMBINATIONS` value combinations are hashed, beyond that nothing is pruned.
"""

from __future__ import annotations

import itertools

import pyarrow as pa

from planner import logical as L
from storage import bucket_ids, bucket_of

MAX_COMBINATIONS = 1024


def prune_buckets(scan: L.OlapScan, dist_columns: list[str], buckets_by_partition: dict[int, int]) -> None:
    if not dist_columns:
        return
    values: list[tuple] = []
    for col in dist_columns:
        found = None
        for p in scan.predicates:
            if p.column == col and p.op in ("=", "in"):
                found = set(p.values) if found is None else found & set(p.values)
        if found is None:
            return
        values.append(tuple(found))
    combos = 1
    for v in values:
        combos *= len(v)
    if combos > MAX_COMBINATIONS:
        return
    rows = list(itertools.product(*values))
    types = [scan.column_types[c] for c in dist_columns]
    if len(rows) == 1:  # a key lookup: its one row hashed without building arrays
        found = {num: bucket_of(rows[0], types, num) for num in set(buckets_by_partition.values())}
        if None not in found.values():
            scan.tablets = [t for t in scan.tablets
                            if found[buckets_by_partition[t.partition_id]] == t.bucket]
            return
    arrays = [pa.array([r[i] for r in rows], t.arrow()) for i, t in enumerate(types)]
    keep: set[tuple[int, int]] = set()
    for num in set(buckets_by_partition.values()):
        for b in (bucket_ids(arrays, types, num).tolist() if rows else []):
            keep.add((num, int(b)))
    scan.tablets = [t for t in scan.tablets
                    if (buckets_by_partition[t.partition_id], t.bucket) in keep]
