"""Streaming execution: the pipeline above the scans runs batch by batch.

A plan whose top is a chain of Filter / Project / Extend / Rename / Limit over OlapScans (the
shape of every plain SELECT ... WHERE) is run as a generator: each tablet's rows are filtered,
projected and handed to the connection before the next tablet is read (the next one is read
ahead in the pool meanwhile), so a large result never sits in memory whole and its first rows
reach the client early. Tablets read one by one with page-level indexes are read in this thread
while they take less than INLINE_BUDGET_S (executor/operators/scan.py), then ahead in the pool.
Blocking operators (sort, aggregate, join, window, set operations)
materialise their input through `executor.run.execute` and yield their result once, except
under `enable_spill` (`env.spill` set): hash aggregations, hash joins and sorts then consume
their inputs as streams and yield their result partition by partition or run by run
(executor/spill/), so that neither their input nor their output is ever whole in memory.
A stream always yields at least one (possibly empty) batch, so result types are known.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Callable, Iterator

import pyarrow as pa

from executor.env import ExecEnv
from executor.operators.filter import run_filter
from executor.operators.table_function import run_table_function
from executor.operators.project import run_project
from executor.operators.scan import inline_reads, read_unit, scan_schema, scan_units
from executor.run import check_memory, execute, execute_in_memory
from executor.spill import spill_aggregate, spill_join, spill_sort
from planner import logical as L
from storage import cpu_slots

READ_AHEAD = 2


def stream(node: object, env: ExecEnv) -> Iterator[pa.Table]:
    handler = _STREAMERS.get(type(node))
    if handler is None and env.spill is not None:
        handler = _SPILLERS.get(type(node))
    if handler is None:
        yield execute(node, env)
        return
    if env.profile is None:
        for batch in handler(node, env):
            env.check_cancelled()
            yield batch
        return
    batches = handler(node, env)
    while True:  # EXPLAIN ANALYZE: rows and time (inclusive of the inputs) per node
        start = time.perf_counter()
        batch = next(batches, None)
        if batch is None:
            return
        env.record(node, batch.num_rows, time.perf_counter() - start, nbytes=batch.nbytes)
        yield batch


def _scan(node: L.OlapScan, env: ExecEnv) -> Iterator[pa.Table]:
    schema = scan_schema(node)
    pending: deque = deque()
    units = scan_units(node, env)
    if len(units) == 1:  # one tablet (a point lookup): read here, no hop to the pool
        table, stats, _ = read_unit(node, units[0], env, schema)
        env.scan_stats.merge(stats)
        if table.num_rows:
            check_memory(table, env)
        yield table if table.num_rows else schema.empty_table()
        return
    def taken(table: pa.Table, stats) -> bool:  # counted and checked: rows to hand on?
        env.scan_stats.merge(stats)
        if table.num_rows:
            check_memory(table, env)
        return table.num_rows > 0

    yielded, done = False, 0
    for table, stats, _ in inline_reads(node, units, lambda u: read_unit(node, u, env, schema)):
        done += 1  # indexed tablets read here while they are cheap
        if taken(table, stats):
            yielded = True
            yield table
    units = iter(units[done:])
    while True:
        while len(pending) < READ_AHEAD:
            unit = next(units, None)
            if unit is None:
                break
            pending.append(env.pool.submit(read_unit, node, unit, env, schema))
        if not pending:
            break
        with cpu_slots.blocking():  # the unit's task takes the slot (storage/cpu_slots.py)
            table, stats, _ = pending.popleft().result()
        if taken(table, stats):
            yielded = True
            yield table
    if not yielded:
        yield schema.empty_table()


def _limit(node: L.Limit, env: ExecEnv) -> Iterator[pa.Table]:
    skip, left = node.offset, node.limit
    empty, yielded = None, False
    for batch in stream(node.input, env):
        empty = batch.slice(0, 0)
        if skip:
            cut = min(skip, batch.num_rows)
            batch, skip = batch.slice(cut), skip - cut
        if left is not None:
            batch = batch.slice(0, left)
            left -= batch.num_rows
        if batch.num_rows:
            yielded = True
            yield batch
        if left == 0:
            break
    if empty is not None and not yielded:  # LIMIT 0 too: one empty batch carries the types
        yield empty


def _extend(node: L.Extend, env: ExecEnv) -> Iterator[pa.Table]:
    for batch in stream(node.input, env):
        extra = run_project(batch, node.exprs, node.names, env.eval_ctx)
        for name in node.names:
            batch = batch.append_column(name, extra.column(name))
        yield batch


_STREAMERS: dict[type, Callable[[object, ExecEnv], Iterator[pa.Table]]] = {
    L.OlapScan: _scan,
    L.Filter: lambda n, env: stream(n.input, env) if n.pushed else
    (run_filter(b, n.condition, env.eval_ctx) for b in stream(n.input, env)),
    L.Project: lambda n, env: (run_project(b, n.exprs, n.names, env.eval_ctx)
                               for b in stream(n.input, env)),
    L.Rename: lambda n, env: (pa.Table.from_arrays([b.column(x) for x in n.names], names=n.aliases)
                              for b in stream(n.input, env)),
    L.Extend: _extend,
    L.TableFunction: lambda n, env: (run_table_function(b, n, env.eval_ctx)
                                     for b in stream(n.input, env)),
    L.Limit: _limit,
}


def _spill_aggregate(node: L.Aggregate, env: ExecEnv) -> Iterator[pa.Table]:
    if node.grouping_sets is not None:
        yield execute_in_memory(node, env)
        return
    for batch in spill_aggregate(node, stream(node.input, env), env):
        yield check_memory(batch, env)


def _spill_sort(node: L.Sort, env: ExecEnv) -> Iterator[pa.Table]:
    for batch in spill_sort(node, stream(node.input, env), env):
        yield check_memory(batch, env)


# Blocking operators that stream (and may spill) under enable_spill (executor/spill/)
_SPILLERS: dict[type, Callable[[object, ExecEnv], Iterator[pa.Table]]] = {
    L.Aggregate: _spill_aggregate,
    L.Join: lambda n, env: spill_join(n, stream, env),
    L.Sort: _spill_sort,
}
