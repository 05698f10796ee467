"""Joins executed the way the plan distributes them, with the bytes each exchange moves.

`planner/fragments.py` decides each hash join's distribution (`Join.distribution`); here it is
carried out over instances, one per bucket of the probe table:

    COLOCATE        bucket i of the left joins bucket i of the right: nothing moves
    BUCKET_SHUFFLE  the right side is hashed to the left's buckets (`storage.bucket_ids`, the
                    function that placed the left rows): right bytes move
    BROADCAST       every left instance receives the whole right side: right bytes x instances
    PARTITIONED     both sides are hashed on the join keys into N partitions: left + right bytes

`instances(node)` gives a subtree's output split by bucket when it is a scan, possibly under
filters/projections and bucket-preserving joins; anything else is one instance. Per-instance
joins run in the pool (Acero releases the GIL). `env.exchange_bytes` counts what moved, per
strategy; a COLOCATE join adds 0.

A shortcut, named plainly: where the consumer only concatenates a join's instance outputs
(`split=False`: the parent is not a per-bucket join), BUCKET_SHUFFLE, BROADCAST and PARTITIONED
joins run as one join over all instances' rows (`_join_once`). The pairs are the same (an
instance's right rows are exactly those its keys can match), the exchange is counted as the
plan's distribution moves it, and the work is one hash table instead of one per instance and
no hashing of rows to instances (a 6M-row bucket shuffle spent ~0.6 s in `bucket_ids` alone).
A BROADCAST join whose output must stay split joins once with each row tagged by its instance.
"""

from __future__ import annotations

import time
from collections import defaultdict

import numpy as np
import pyarrow as pa

from executor.operators.filter import run_filter
from executor.operators.join import INSTANCE_TAG, cast_key, run_join
from executor.operators.project import run_project
from executor.runtime_filter import apply_runtime_filters
from executor.operators.scan import read_tablets, run_scan, scan_schema
from planner import logical as L
from storage import bucket_ids
from storage.types import from_arrow

DEFAULT_SHUFFLE_PARTITIONS = 4


def _scan_instances(node: L.OlapScan, env, split: bool = True) -> list[pa.Table] | None:
    """One table per bucket index (all of the table's buckets; pruned ones empty). With
    `split` false (the caller only concatenates the instances) every row is in the first
    table: the scan units' rows are not cut into tablets and regrouped by bucket (336
    tablets: ~1 ms of slicing and concatenation per scan)."""
    if not node.num_buckets:
        return None
    if not split:
        start = time.perf_counter()
        table = run_scan(node, env)
        if env.profile is not None:
            env.record(node, table.num_rows, time.perf_counter() - start, nbytes=table.nbytes)
        return [table] + [table.slice(0, 0)] * (node.num_buckets - 1)
    schema = scan_schema(node)
    start = time.perf_counter()
    parts = read_tablets(node, env, schema)
    if env.profile is not None:  # a table's nbytes walks its buffers: only when profiled
        env.record(node, sum(t.num_rows for t, _ in parts), time.perf_counter() - start,
                   nbytes=sum(t.nbytes for t, _ in parts))
    tables: dict[int, list[pa.Table]] = defaultdict(list)
    for st, (table, stats) in zip(node.tablets, parts):
        env.scan_stats.merge(stats)
        tables[st.bucket].append(table)
    return [pa.concat_tables(tables[b]) if tables[b] else schema.empty_table()
            for b in range(node.num_buckets)]


def instances(node: object, env, split: bool = True) -> list[pa.Table] | None:
    """The subtree's output split by the probe table's buckets, or None if not bucketed.

    split=False: the caller only concatenates the parts, so BROADCAST joins below may run
    once over all instances' rows (one hash table instead of one per instance); the first
    part then holds every row and the others are empty (their count is still the number of
    instances, which the exchange bytes are counted by)."""
    if isinstance(node, L.OlapScan):
        return _scan_instances(node, env, split)
    if isinstance(node, (L.Filter, L.Project, L.Rename)):
        parts = instances(node.input, env, split)
        if parts is None:
            return None
        if isinstance(node, L.Filter):
            return parts if node.pushed else \
                [run_filter(p, node.condition, env.eval_ctx) for p in parts]
        if isinstance(node, L.Project):
            return [run_project(p, node.exprs, node.names, env.eval_ctx) for p in parts]
        return [pa.Table.from_arrays([p.column(x) for x in node.names], names=node.aliases)
                for p in parts]
    if isinstance(node, L.Join) and node.distribution in ("COLOCATE", "BUCKET_SHUFFLE", "BROADCAST"):
        return join_instances(node, env, split)
    return None


def _hash_split(table: pa.Table, keys: list[str], types: list, n: int,
                hashed: pa.Table | None = None) -> list[pa.Table]:
    """`table`'s rows by the bucket of their keys (read from `hashed`, the keys cast to the
    other side's types, when given: the rows themselves keep their types)."""
    if table.num_rows == 0:
        return [table] * n
    cols = [(hashed if hashed is not None else table).column(k).combine_chunks() for k in keys]
    target = np.asarray(bucket_ids(cols, types, n))
    order = np.argsort(target, kind="stable")
    counts = np.bincount(target, minlength=n)
    bounds = np.concatenate(([0], np.cumsum(counts)))
    taken = table.take(pa.array(order))
    return [taken.slice(int(bounds[i]), int(counts[i])) for i in range(n)]


def _key_types(table: pa.Table, keys: list[str]) -> list:
    return [from_arrow(table.schema.field(k).type) for k in keys]


def _count(env, node: L.Join, kind: str, nbytes: int) -> None:
    env.exchange_bytes[kind] = env.exchange_bytes.get(kind, 0) + int(nbytes)
    env.record(node, moved=int(nbytes))


def join_instances(node: L.Join, env, split: bool = True) -> list[pa.Table]:
    from executor.run import execute
    kind = node.distribution
    if kind == "COLOCATE":
        left_parts, right_parts = instances(node.left, env), instances(node.right, env)
        if left_parts is not None and right_parts is not None and len(left_parts) == len(right_parts):
            _count(env, node, kind, 0)
            return _join_pairs(left_parts, right_parts, node, env)
        kind = "PARTITIONED"
    # The build side runs first: its keys become runtime filters on the probe scan.
    right = execute(node.right, env)
    left_node = apply_runtime_filters(node, right)
    env.alias(left_node, node.left)
    left_parts = instances(left_node, env, split)
    if kind == "BUCKET_SHUFFLE" and left_parts is not None and node.bucket_right_keys:
        _count(env, node, kind, right.nbytes)
        if not split:
            return _join_once(left_parts, right, node, env)
        # Hash the right rows exactly as the left table's rows were bucketed: its distribution
        # columns' types and order, modulo its bucket count.
        left_keys = [node.left_keys[node.right_keys.index(r)] for r in node.bucket_right_keys]
        types = _key_types(left_parts[0], left_keys)
        keys = node.bucket_right_keys
        start = time.perf_counter()
        right_parts = _hash_split(right, keys, types, len(left_parts),
                                  _cast_keys(right.select(list(dict.fromkeys(keys))), keys, types))
        env.record(node, right.num_rows, time.perf_counter() - start, part=L.BUILD_EXCHANGE)
        return _join_pairs(left_parts, right_parts, node, env)
    if kind == "BROADCAST":
        if left_parts is None:
            left_parts = [execute(left_node, env)]
        _count(env, node, kind, right.nbytes * len(left_parts))
        if len(left_parts) == 1:
            return _join_pairs(left_parts, [right], node, env)
        return _join_once(left_parts, right, node, env) if not split else \
            _join_tagged(left_parts, right, node, env)
    left = _concat(left_parts) if left_parts is not None else execute(left_node, env)
    _count(env, node, "PARTITIONED", left.nbytes + right.nbytes)
    if not split:
        return [run_join(left, right, node, env.eval_ctx, env.mem_limit)]
    n = DEFAULT_SHUFFLE_PARTITIONS
    types = _key_types(left, node.left_keys)
    start = time.perf_counter()
    left_split = _hash_split(left, node.left_keys, types, n)
    split_at = time.perf_counter()
    right_split = _hash_split(right, node.right_keys, types, n,
                              _cast_keys(right.select(list(dict.fromkeys(node.right_keys))), node.right_keys,
                                         types))
    env.record(node, left.num_rows, split_at - start, part=L.PROBE_EXCHANGE)
    env.record(node, right.num_rows, time.perf_counter() - split_at, part=L.BUILD_EXCHANGE)
    return _join_pairs(left_split, right_split, node, env)


def _join_once(left_parts: list[pa.Table], right: pa.Table, node: L.Join, env) -> list[pa.Table]:
    """The instances' joins as one join over all their rows, when their outputs are only
    concatenated: the same pairs (each instance's right rows are the ones its keys can
    match), one hash table instead of one per instance, and no hashing of rows to instances.
    The first part holds the output, the others are empty."""
    joined = run_join(_concat(left_parts), right, node, env.eval_ctx, env.mem_limit)
    return [joined] + [joined.slice(0, 0)] * (len(left_parts) - 1)


def _join_tagged(left_parts: list[pa.Table], right: pa.Table, node: L.Join, env) -> list[pa.Table]:
    """A BROADCAST join whose output must stay split by instance: one join over all left rows,
    each tagged with its instance, then split again by the tag."""
    tagged = [p.append_column(INSTANCE_TAG, pa.array(np.full(p.num_rows, i, np.int32)))
              for i, p in enumerate(left_parts)]
    joined = run_join(_concat(tagged), right, node, env.eval_ctx, env.mem_limit)
    part = joined.column(INSTANCE_TAG).to_numpy()
    joined = joined.drop_columns([INSTANCE_TAG])
    order = np.argsort(part, kind="stable")
    counts = np.bincount(part, minlength=len(left_parts))
    bounds = np.concatenate(([0], np.cumsum(counts)))
    taken = joined.take(pa.array(order))
    return [taken.slice(int(bounds[i]), int(counts[i])) for i in range(len(left_parts))]


def _cast_keys(table: pa.Table, keys: list[str], types: list) -> pa.Table:
    """Right-side keys cast to the left's types, so equal values hash to the same bucket (text
    that is no number of an integer key is NULL: it matches nothing); for hashing only."""
    for k, t in zip(keys, types):
        if table.schema.field(k).type != t.arrow():
            i = table.schema.get_field_index(k)
            table = table.set_column(i, k, cast_key(table.column(k), t.arrow()))
    return table


def _join_pairs(lefts: list[pa.Table], rights: list[pa.Table], node: L.Join, env) -> list[pa.Table]:
    pairs = list(zip(lefts, rights))
    if len(pairs) == 1:
        return [run_join(pairs[0][0], pairs[0][1], node, env.eval_ctx, env.mem_limit)]
    return list(env.pool.map(
        lambda lr: run_join(lr[0], lr[1], node, env.eval_ctx, env.mem_limit), pairs))


def _concat(parts: list[pa.Table]) -> pa.Table:
    full = [p for p in parts if p.num_rows] or parts[:1]
    return pa.concat_tables(full) if len(full) > 1 else full[0]


def run_distributed_join(node: L.Join, env) -> pa.Table:
    from executor.run import execute
    if node.kind == "cross" or node.distribution is None:
        right = execute(node.right, env)
        left_node = apply_runtime_filters(node, right)
        env.alias(left_node, node.left)
        return run_join(execute(left_node, env), right, node, env.eval_ctx, env.mem_limit)
    parts = join_instances(node, env, split=False)
    parts = [p for p in parts if p.num_rows] or parts[:1]
    return pa.concat_tables(parts) if len(parts) > 1 else parts[0]
