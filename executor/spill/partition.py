"""Hash partitioning of a query's rows for spilling (Doris's spill partitioner).

`partition_ids(columns, n)` gives every row a partition in [0, n) from its key values: rows with
equal keys (NULL equal to NULL) always land in the same partition, whichever batch they come
in, and a join's two sides agree when their keys were cast to one type first (`common_keys`).
The hash is the chained CRC32 of the distribution hash (storage.bucket_ids' kernel), mixed by a
multiplicative step so that a table bucketed by the same keys still spreads over all
partitions. `PartitionedSpill` appends batches to n spill files, one per partition.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from executor.operators.join import cast_key, common_type
from executor.spill.space import QuerySpill, SpillFile
from storage.hashing import crc32_rows
from storage.types import from_arrow

# One multiplier per partitioning level: a partition split again (it was too large) spreads
# over new partitions instead of landing in one (its rows share their level-0 partition).
_MIXERS = (np.uint64(0x9E3779B1), np.uint64(0x85EBCA6B), np.uint64(0xC2B2AE35))
MAX_LEVEL = len(_MIXERS) - 1


def _hashable(col: pa.ChunkedArray | pa.Array):
    """The column and its Doris type for the CRC32 kernel; other types hash as their text."""
    t = col.type
    if pa.types.is_dictionary(t):
        col, t = col.cast(t.value_type), t.value_type
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t) \
            or pa.types.is_date(t) or pa.types.is_timestamp(t) or pa.types.is_boolean(t) \
            or pa.types.is_string(t) or pa.types.is_large_string(t):
        return col, from_arrow(t)
    text = col.cast(pa.string())
    return text, from_arrow(pa.string())


def partition_ids(columns: list, n: int, level: int = 0) -> np.ndarray:
    """Each row's partition (int64 in [0, n)) by the values of `columns`, at a partitioning
    level (0, or deeper when a partition is split again)."""
    pairs = [_hashable(c) for c in columns]
    h = crc32_rows([c for c, _ in pairs], [t for _, t in pairs]).astype(np.uint64)
    mixed = ((h * _MIXERS[level]) & np.uint64(0xFFFFFFFF)) >> np.uint64(8 + 4 * level)
    return (mixed % np.uint64(n)).astype(np.int64)


def split(table: pa.Table, ids: np.ndarray, n: int) -> list[pa.Table]:
    """`table`'s rows by partition: one (possibly empty) table per partition, order kept."""
    order = np.argsort(ids, kind="stable")
    counts = np.bincount(ids, minlength=n)
    bounds = np.concatenate(([0], np.cumsum(counts)))
    taken = table.take(pa.array(order))
    return [taken.slice(int(bounds[i]), int(counts[i])) for i in range(n)]


def common_keys(left: pa.Schema, right: pa.Schema, lkeys: list[str],
                rkeys: list[str]) -> list[pa.DataType]:
    """The type each join key pair is hashed as (both sides cast to it)."""
    return [left.field(lk).type if left.field(lk).type == right.field(rk).type
            else common_type(left.field(lk).type, right.field(rk).type)
            for lk, rk in zip(lkeys, rkeys)]


def key_columns(table: pa.Table, keys: list[str], types: list[pa.DataType] | None = None):
    cols = [table.column(k) for k in keys]
    if types is not None:
        cols = [c if c.type == t else cast_key(c, t) for c, t in zip(cols, types)]
    return cols


class PartitionedSpill:
    """n spill files, one per partition; `add` splits a batch by its keys' partitions."""

    def __init__(self, spill: QuerySpill, n: int, keys: list[str],
                 key_types: list[pa.DataType] | None = None, level: int = 0):
        self.spill, self.n, self.keys, self.key_types = spill, n, keys, key_types
        self.level = level
        self.files: list[SpillFile] | None = None

    def add(self, table: pa.Table) -> None:
        if table.num_rows == 0:
            return
        if self.files is None:
            self.files = [SpillFile(self.spill, table.schema) for _ in range(self.n)]
        ids = partition_ids(key_columns(table, self.keys, self.key_types), self.n, self.level)
        for f, part in zip(self.files, split(table, ids, self.n)):
            f.write(part)

    def nbytes(self, i: int) -> int:
        return 0 if self.files is None else self.files[i].nbytes

    def split_again(self, i: int) -> PartitionedSpill:
        """Partition i split into n partitions one level deeper (its file removed); call
        below MAX_LEVEL only."""
        deeper = PartitionedSpill(self.spill, self.n, self.keys, self.key_types, self.level + 1)
        if self.files is None:
            return deeper
        try:
            for table in self.files[i].tables():
                deeper.add(table)
        except BaseException:
            deeper.remove()
            raise
        self.files[i].remove()
        return deeper

    def read(self, i: int, schema: pa.Schema) -> pa.Table:
        """Partition i's rows (removing its file); an empty table of `schema` if none."""
        if self.files is None:
            return schema.empty_table()
        f = self.files[i]
        table = f.read_all()
        f.remove()
        return table

    def remove(self) -> None:
        for f in self.files or []:
            f.remove()
