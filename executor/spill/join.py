"""Hash join that spills (Doris's PartitionedHashJoinSink/ProbeOperator: a Grace hash join).

Both sides stream in (executor/stream.py). The build (right) side is held while it stays under
the query's spill threshold (executor/spill/space.py):

- the build side fits: the probe side is held up to what is left of the threshold; if it fits
  too, one in-memory join. A build side of at most a quarter of the threshold (a dimension
  table) also becomes runtime filters on the probe side, as in memory (a larger one's key set
  would cost about what it saves).
  Otherwise, for joins whose result is the union of each probe batch's result against the
  whole build side (inner, left outer/semi/anti, null-aware anti, cross) and a build side of
  at most a quarter of the threshold (a dimension table), the probe side is joined in groups
  of batches and nothing is written;
- otherwise (or for right/full outer and right semi/anti joins), both sides are split by the
  hash of their join keys - cast to one type per key pair, so equal keys meet - into
  `spill_hash_join_partition_count` spill files each, and each partition pair is joined alone
  (rows that can match share a partition; unmatched rows of outer and anti joins appear in
  exactly one). The memory held is one partition pair, not the inputs; a pair still over the
  threshold is split again by another hash (partition.py, up to MAX_LEVEL).

A join without equi-keys (a cross join, a residual condition only) or a null-aware anti join
(NOT IN) holds its build side whole and probes it batch by batch: their results are not a union
over key partitions (a right or full outer one without keys runs in memory).
"""

from __future__ import annotations

from typing import Callable, Iterator

import pyarrow as pa

from executor.operators.join import run_join
from executor.runtime_filter import apply_runtime_filters
from executor.spill.hold import Held, concat, groups
from executor.spill.partition import MAX_LEVEL, PartitionedSpill, common_keys
from planner import logical as L

# A build side probed batch by batch is at most this share of the threshold: its hash table
# (several times its bytes) is built for every probe group, each group larger than it.
_SMALL_BUILD = 4
_PROBE_WISE = {"inner", "left outer", "left semi", "left anti", "null aware left anti", "cross"}


def spill_join(node: L.Join, stream: Callable, env) -> Iterator[pa.Table]:
    limit = env.spill.threshold()
    right = Held(stream(node.right, env), limit, env)
    partitionable = node.kind not in ("cross", "null aware left anti") and node.left_keys
    if right.rest is None or not partitionable:
        build = concat(list(right.all()))
        small = build.nbytes * _SMALL_BUILD <= limit or not partitionable
        left_node = node.left
        if small:  # a large build's key set would cost about what it saves
            left_node = apply_runtime_filters(node, build)
            env.alias(left_node, node.left)
        left = Held(stream(left_node, env), max(0, limit - build.nbytes), env)
        if left.rest is None:
            yield _join(left.table(), build, node, env)
            return
        if node.kind in _PROBE_WISE and small:
            yield from _probe_wise(left, build, node, env, limit)
            return
        if not partitionable:  # a right/full outer join without equi-keys: in memory
            yield _join(concat(list(left.all())), build, node, env)
            return
        right = Held(iter([build]), 1 << 62, env)
    else:
        left = Held(stream(node.left, env), 0, env)
    yield from _grace(left, right, node, env, limit)


def _join(left: pa.Table, right: pa.Table, node: L.Join, env) -> pa.Table:
    from executor.run import check_memory
    return check_memory(run_join(left, right, node, env.eval_ctx, env.mem_limit), env)


def _probe_wise(left: Held, build: pa.Table, node: L.Join, env, limit: int) -> Iterator[pa.Table]:
    """Groups of probe batches of about `limit` bytes with the build, each joined with it."""
    for group in groups(left.all(), limit - build.nbytes, env):
        yield _join(group, build, node, env)


def _grace(left: Held, right: Held, node: L.Join, env, limit: int) -> Iterator[pa.Table]:
    spill = env.spill
    n = spill.options.spill_hash_join_partition_count
    probe = left.all()
    first_left = next(probe)  # a stream yields at least one batch
    first_right = right.batches[0]
    types = common_keys(first_left.schema, first_right.schema, node.left_keys, node.right_keys)
    lparts = PartitionedSpill(spill, n, node.left_keys, types)
    rparts = PartitionedSpill(spill, n, node.right_keys, types)
    try:
        for batch in right.all():
            env.check_cancelled()
            rparts.add(batch)
        lparts.add(first_left)
        for batch in probe:
            env.check_cancelled()
            lparts.add(batch)
        yielded = False
        deepest = max(limit, spill.options.spill_min_revocable_mem)
        for out in _join_partitions(lparts, rparts, first_left.schema, first_right.schema,
                                    node, env, deepest):
            yielded = True
            yield out
        if not yielded:
            yield _join(first_left.schema.empty_table(), first_right.schema.empty_table(),
                        node, env)
    finally:
        lparts.remove()
        rparts.remove()


def _join_partitions(lparts: PartitionedSpill, rparts: PartitionedSpill, lschema: pa.Schema,
                     rschema: pa.Schema, node: L.Join, env, limit: int) -> Iterator[pa.Table]:
    """Each partition pair joined; a pair over `limit` bytes is split again by another hash
    of the keys (both sides alike), down to MAX_LEVEL."""
    for i in range(lparts.n):
        env.check_cancelled()
        if lparts.nbytes(i) + rparts.nbytes(i) > limit and lparts.level < MAX_LEVEL:
            left, right = lparts.split_again(i), rparts.split_again(i)
            try:
                yield from _join_partitions(left, right, lschema, rschema, node, env, limit)
            finally:
                left.remove()
                right.remove()
            continue
        l_rows, r_rows = lparts.read(i, lschema), rparts.read(i, rschema)
        if l_rows.num_rows or r_rows.num_rows:
            out = _join(l_rows, r_rows, node, env)
            if out.num_rows:
                yield out
