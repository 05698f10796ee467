"""Hash aggregation that spills: partial states partitioned by the group keys, merged per
partition (Doris's PartitionedAggSinkOperator / SourceOperator).

The input streams in (executor/stream.py). Each batch is pre-aggregated into partial states
when every call splits into states that merge exactly (aggregate_scan.split_calls: COUNT, SUM
of integers and decimals, MIN, MAX, AVG of decimals); a batch that hardly reduces (sampled as
aggregate_scan does) passes its rows on as states. Other calls (DISTINCT, GROUP_CONCAT, sums of
floats...) keep the raw rows, aggregated in one pass per partition. While the states held stay
under the query's spill threshold (executor/spill/space.py) nothing is written and the result
is the in-memory one; past it, the held states and every later batch are split by the hash of
the group keys into `spill_aggregation_partition_count` spill files, then each partition is
read back and merged alone: all states of a group are in one partition, so the memory held is
about one partition's states, not the input's; a partition still over the threshold is split
again by another hash (partition.py, up to MAX_LEVEL). Groups come out partition by partition.
"""

from __future__ import annotations

from typing import Callable, Iterator

import pyarrow as pa

from executor.operators.aggregate import AggInput, run_aggregate
from executor.operators.aggregate_scan import REDUCTION, SAMPLE_ROWS, as_states, split_calls
from executor.spill.hold import concat
from executor.spill.partition import MAX_LEVEL, PartitionedSpill
from planner import logical as L


class _PreAggregate:
    """Batch -> partial states (or the batch itself when the calls do not split)."""

    def __init__(self, node: L.Aggregate, schema: pa.Schema):
        split = split_calls(node, {f.name: f.type for f in schema})
        self.keys = node.group_names
        if split is None:
            self.calls = None
            self.finish: Callable[[pa.Table], pa.Table] = \
                lambda t: run_aggregate(t, node.group_names, node.calls)
        else:
            self.calls, self.finish = split
        self.few_groups: bool | None = None

    def __call__(self, batch: pa.Table) -> pa.Table:
        if self.calls is None:
            return batch
        if self.few_groups is False:
            return as_states(AggInput.of(batch), self.keys, self.calls)
        part = run_aggregate(batch, self.keys, self.calls)
        if self.keys and batch.num_rows >= SAMPLE_ROWS:
            self.few_groups = part.num_rows <= batch.num_rows * REDUCTION
        return part


def spill_aggregate(node: L.Aggregate, batches: Iterator[pa.Table], env) -> Iterator[pa.Table]:
    spill = env.spill
    batches = iter(batches)
    first = next(batches)  # a stream yields at least one batch
    pre = _PreAggregate(node, first.schema)
    limit = spill.threshold()
    held: list[pa.Table] = []
    nbytes = 0
    parts: PartitionedSpill | None = None
    schema: pa.Schema | None = None
    try:
        for batch in _chain(first, batches):
            env.check_cancelled()
            state = pre(batch)
            schema = schema or state.schema
            if parts is not None:
                parts.add(state)
                continue
            held.append(state)
            nbytes += state.nbytes
            if nbytes > limit and node.group_names:
                parts = PartitionedSpill(spill, spill.options.spill_aggregation_partition_count,
                                         node.group_names)
                for h in held:
                    parts.add(h)
                held, nbytes = [], 0
        if parts is None:
            yield pre.finish(concat(held))
            return
        yielded = False
        deepest = max(limit, spill.options.spill_min_revocable_mem)
        for out in _merge_partitions(parts, schema, pre, deepest, env):
            yielded = True
            yield out
        if not yielded:
            yield pre.finish(schema.empty_table())
    finally:
        if parts is not None:
            parts.remove()


def _merge_partitions(parts: PartitionedSpill, schema: pa.Schema, pre: _PreAggregate,
                      limit: int, env) -> Iterator[pa.Table]:
    """Each partition's groups merged; a partition over `limit` bytes (skew, or an input over
    n x the threshold) is split again by another hash of the keys, down to MAX_LEVEL."""
    for i in range(parts.n):
        env.check_cancelled()
        if parts.nbytes(i) > limit and parts.level < MAX_LEVEL:
            deeper = parts.split_again(i)
            try:
                yield from _merge_partitions(deeper, schema, pre, limit, env)
            finally:
                deeper.remove()
            continue
        rows = parts.read(i, schema)
        if rows.num_rows:
            yield pre.finish(rows)


def _chain(first: pa.Table, rest: Iterator[pa.Table]) -> Iterator[pa.Table]:
    yield first
    yield from rest
