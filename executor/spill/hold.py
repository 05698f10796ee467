"""Holding an operator's input in memory until it passes the spill threshold."""

from __future__ import annotations

from typing import Iterator

import pyarrow as pa


class Held:
    """Batches taken from a stream while their bytes stay within `limit`: `rest` is None when
    the stream ended (everything is held), else the stream's remaining batches (spill them)."""

    def __init__(self, batches: Iterator[pa.Table], limit: int, env):
        self.batches: list[pa.Table] = []
        self.nbytes = 0
        self.rest: Iterator[pa.Table] | None = None
        batches = iter(batches)
        for batch in batches:
            env.check_cancelled()
            self.batches.append(batch)
            self.nbytes += batch.nbytes
            if self.nbytes > limit:
                self.rest = batches
                break

    def table(self) -> pa.Table:
        return concat(self.batches)

    def all(self) -> Iterator[pa.Table]:
        """Every batch: the held ones (released as they go), then the rest."""
        while self.batches:
            yield self.batches.pop(0)
        self.nbytes = 0
        if self.rest is not None:
            yield from self.rest


def groups(batches: Iterator[pa.Table], limit: int, env) -> Iterator[pa.Table]:
    """The batches concatenated into tables of just over `limit` bytes (the last smaller)."""
    group: list[pa.Table] = []
    nbytes = 0
    for batch in batches:
        env.check_cancelled()
        group.append(batch)
        nbytes += batch.nbytes
        if nbytes > limit:
            yield concat(group)
            group, nbytes = [], 0
    if group:
        yield concat(group)


def concat(tables: list[pa.Table]) -> pa.Table:
    full = [t for t in tables if t.num_rows] or tables[:1]
    if len(full) == 1:
        return full[0]
    return pa.concat_tables(full, promote_options="permissive")
