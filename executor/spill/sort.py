"""ORDER BY over more rows than memory holds: sorted runs on disk, merged k ways (Doris's
SpillSortSinkOperator / SpillSortSourceOperator); top-N stays in memory.

- ORDER BY ... LIMIT n keeps only the best n rows seen so far: each time the rows held pass
  2n (and at least a batch's worth), they are cut back to the top n (one vectorised sort).
  When even n rows pass the spill threshold (a large OFFSET), it goes on as an external sort
  whose merged output stops after n rows.
- ORDER BY without a limit holds batches while they stay under the query's spill threshold
  (executor/spill/space.py). Past it, the held rows are sorted and written as one run (a spill
  file of batches of about `spill_sort_batch_bytes`), and so on; at the end the runs are merged:
  each run contributes its current batch, the smallest of the runs' last rows (in the ORDER
  BY's order) is the bound up to which every run's rows can be emitted (nothing later in any
  run can sort before it), those prefixes are sorted together in one pass and emitted, and the
  run whose last row was the bound reads its next batch. The memory held is one batch per run.
Without any spill the result is the in-memory sort's.
"""

from __future__ import annotations

import itertools
from typing import Iterator

import pyarrow as pa

from executor.operators.sort import run_sort, sort_indices
from executor.spill.hold import Held, concat, groups
from executor.spill.space import SpillFile
from planner import logical as L
from storage.sorted_runs import RunKey, merge_chunks


def spill_sort(node: L.Sort, batches: Iterator[pa.Table], env) -> Iterator[pa.Table]:
    spill = env.spill
    limit = spill.threshold()
    if node.limit is not None:
        # top-N stays in memory, even under enable_force_spill, unless n rows are large
        best, rest = _top_n(iter(batches), node.keys, node.limit, env,
                            max(limit, spill.options.spill_min_revocable_mem))
        if rest is None:
            yield best
            return
        batches = itertools.chain([best], rest)
    held = Held(batches, limit, env)
    if held.rest is None:
        yield run_sort(held.table(), node.keys, node.limit)
        return
    runs: list[SpillFile] = []
    try:
        for group in groups(held.all(), limit, env):
            runs.append(_write_run(spill, run_sort(group, node.keys, None),
                                   spill.options.spill_sort_batch_bytes))
        merged = merge_runs([_batches(r) for r in runs], node.keys, env)
        yield from merged if node.limit is None else _head(merged, node.limit)
    finally:
        for r in runs:
            r.remove()


def _top_n(batches: Iterator[pa.Table], keys: list, n: int, env, limit: int):
    """(the top n rows, None), or (the rows held, the rest of the input) once the rows that
    may still be among the top n pass `limit` bytes."""
    best: list[pa.Table] = []
    rows = nbytes = 0
    for batch in batches:
        env.check_cancelled()
        best.append(batch)
        rows += batch.num_rows
        nbytes += batch.nbytes
        if rows > max(2 * n, batch.num_rows) and len(best) > 1:
            best = [run_sort(concat(best), keys, n)]
            rows, nbytes = best[0].num_rows, best[0].nbytes
        if nbytes > limit:
            return concat(best), batches
    return run_sort(concat(best), keys, n), None


def _head(batches: Iterator[pa.Table], n: int) -> Iterator[pa.Table]:
    """The first n rows of a stream (at least one batch)."""
    for batch in batches:
        batch = batch.slice(0, n)
        n -= batch.num_rows
        yield batch
        if n == 0:
            return


def _write_run(spill, table: pa.Table, batch_bytes: int) -> SpillFile:
    run = SpillFile(spill, table.schema)
    per_row = max(1, table.nbytes // max(table.num_rows, 1))
    run.write(table, max_chunksize=max(1024, batch_bytes // per_row))
    run.finish()
    return run


def _batches(run: SpillFile) -> Iterator[pa.Table]:
    for batch in run.batches():
        yield pa.Table.from_batches([batch])


def merge_runs(runs: list[Iterator[pa.Table]], keys: list, env=None) -> Iterator[pa.Table]:
    """The rows of sorted `runs` in one sorted stream (storage/sorted_runs.py: chunks of
    consecutive key ranges, each sorted here), batch by batch."""
    run_keys = [RunKey(k.name, k.descending, k.nulls_at_start()) for k in keys]
    for chunk in merge_chunks(runs, run_keys):
        if env is not None:
            env.check_cancelled()
        yield chunk.take(sort_indices(chunk, keys))
