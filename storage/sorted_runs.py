"""K-way merge of sorted runs, vectorised per batch: what compaction (storage/compaction.py)
and the executor's external sort (executor/spill/sort.py) build on.

Each run is an iterator of tables sorted by `keys` (RunKey: column, direction, NULL
placement). `merge_chunks` holds one batch per run and yields chunks that cover consecutive
ranges of keys: the bound is the smallest of the open runs' last rows (no later row of any run
can sort before it), and a chunk is every run's prefix strictly before the bound, concatenated
in run order (unsorted: the caller sorts it, stably, so that equal keys keep run order). Rows
with equal keys are therefore always in one chunk (compaction merges them). When no row is
before the bound (the bounding run's batch holds one key only), that run reads its next batch
into its buffer. Memory: one batch per run, plus the rows of a key spread over several batches.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


@dataclass(frozen=True)
class RunKey:
    name: str
    descending: bool = False
    nulls_first: bool = True


def merge_chunks(runs: list[Iterator[pa.Table]], keys: list[RunKey]) -> Iterator[pa.Table]:
    buffers: list[pa.Table | None] = [None] * len(runs)
    live = [True] * len(runs)  # the run may have more batches
    while True:
        for i, run in enumerate(runs):  # refill the empty buffers of live runs
            while live[i] and (buffers[i] is None or buffers[i].num_rows == 0):
                batch = next(run, None)
                if batch is None:
                    live[i] = False
                else:
                    buffers[i] = batch
        waiting = [i for i, b in enumerate(buffers) if b is not None and b.num_rows]
        open_runs = [i for i in waiting if live[i]]
        if not open_runs:
            if waiting:
                yield _concat([buffers[i] for i in waiting])
            return
        bounding = _smallest_last(buffers, open_runs, keys)
        bound = buffers[bounding].slice(buffers[bounding].num_rows - 1)
        taken = []
        for i in waiting:
            count = int(np.count_nonzero(rows_before(buffers[i], bound, keys)))
            if count:
                taken.append(buffers[i].slice(0, count))
                buffers[i] = buffers[i].slice(count)
        if taken:
            yield _concat(taken)
            continue
        more = next(runs[bounding], None)  # its rows all equal the bound: read on
        if more is None:
            live[bounding] = False
        else:
            buffers[bounding] = _concat([buffers[bounding], more])


def _smallest_last(buffers: list[pa.Table], runs: list[int], keys: list[RunKey]) -> int:
    """The run (among `runs`) whose last row sorts first (a loop over runs, not rows)."""
    best = runs[0]
    for i in runs[1:]:
        last = buffers[i].slice(buffers[i].num_rows - 1)
        if rows_before(last, buffers[best].slice(buffers[best].num_rows - 1), keys)[0]:
            best = i
    return best


def rows_before(table: pa.Table, bound: pa.Table, keys: list[RunKey]) -> np.ndarray:
    """Rows of `table` that sort strictly before the one row of `bound` under `keys`
    (lexicographic, vectorised: from the last key to the first)."""
    n = table.num_rows
    result = np.zeros(n, dtype=bool)
    for k in reversed(keys):
        col = table.column(k.name)
        b = bound.column(k.name)[0]
        nulls = np.asarray(col.is_null()) if col.null_count else np.zeros(n, dtype=bool)
        if not b.is_valid:
            before = np.zeros(n, dtype=bool) if k.nulls_first else ~nulls
            equal = nulls
        else:
            compare = pc.greater if k.descending else pc.less
            before = _numpy(compare(col, b))
            if k.nulls_first:
                before |= nulls
            equal = _numpy(pc.equal(col, b))
        result = before | (equal & result)
    return result


def _numpy(mask) -> np.ndarray:
    return np.asarray(pc.fill_null(mask, False).to_numpy(zero_copy_only=False), dtype=bool)


def _concat(tables: list[pa.Table]) -> pa.Table:
    return tables[0] if len(tables) == 1 else pa.concat_tables(tables)
