"""A query's spill space: where its spilling operators write, and when they must.

Doris's spill (session variable `enable_spill`, default false in 2.1) lets a hash aggregation,
a hash join and a sort write part of their input to the data directory's temp space instead of
holding all of it. Here:

    <storage_root_path>/spill/<query id>/<n>.arrow     Arrow IPC streams, LZ4-compressed

`QuerySpill.directory()` creates the query's directory on the first spill; `cleanup()` removes
it when the query ends, fails or is killed (server/handlers/query.py), and the storage engine
sweeps the whole `spill/` directory at start-up (storage/engine.py: a crash leaves files).

When to spill (`threshold`): an operator holds its input in memory until the bytes held pass
the threshold, then partitions (or sorts and writes) what it holds and everything after it.
The threshold is the query's share of memory: a quarter of the headroom left under the
process's `mem_limit` when the operator starts, not below Doris's `spill_min_revocable_mem`
(spilling less is not worth a file), and at most half of `exec_mem_limit` (what is held is
processed as one intermediate, which that limit checks). A query that holds
less never touches the disk. `enable_force_spill` (Doris's testing switch) spills always.
"""

from __future__ import annotations

import itertools
import os
import shutil
from dataclasses import dataclass
from typing import Iterable

import pyarrow as pa

from storage.process_memory import resident_bytes

_IPC = pa.ipc.IpcWriteOptions(compression="lz4")


@dataclass(frozen=True)
class SpillOptions:
    """Doris's spill session variables (SessionVariable.java names and defaults)."""

    enable_force_spill: bool = False
    spill_min_revocable_mem: int = 32 << 20
    spill_sort_batch_bytes: int = 8 << 20
    spill_aggregation_partition_count: int = 32
    spill_hash_join_partition_count: int = 32


class QuerySpill:
    def __init__(self, root: str, query_id: str, options: SpillOptions = SpillOptions(),
                 exec_mem_limit: int = 0, process_mem_limit: int = 0):
        self.root, self.query_id, self.options = root, query_id, options
        self.exec_mem_limit, self.process_mem_limit = exec_mem_limit, process_mem_limit
        self._names = itertools.count()
        self.files = 0  # spill files created (profiles, tests)
        self._created = False
        self.bytes_written = 0  # compressed bytes of every spill file (profiles, tests)

    @property
    def path(self) -> str:
        return os.path.join(self.root, self.query_id)

    def threshold(self) -> int:
        """Bytes an operator may hold before it spills (module docstring)."""
        if self.options.enable_force_spill:
            return 0
        share = 1 << 62
        if self.process_mem_limit:
            share = max(0, self.process_mem_limit - resident_bytes()) // 4
        share = max(share, self.options.spill_min_revocable_mem)
        if self.exec_mem_limit:  # what is held is checked against it when it is processed
            share = min(share, self.exec_mem_limit // 2)
        return share

    def new_file(self) -> str:
        if not self._created:
            os.makedirs(self.path, exist_ok=True)
            self._created = True
        self.files += 1
        return os.path.join(self.path, f"{next(self._names)}.arrow")

    def cleanup(self) -> None:
        if self._created:
            shutil.rmtree(self.path, ignore_errors=True)
            self._created = False


class SpillFile:
    """One Arrow IPC stream written batch by batch, read back batch by batch, then removed."""

    def __init__(self, spill: QuerySpill, schema: pa.Schema):
        self.spill, self.schema = spill, schema
        self.path = spill.new_file()
        self.num_rows = 0
        self.nbytes = 0  # the rows' bytes in memory (before compression)
        self._sink = pa.OSFile(self.path, "wb")
        self._writer = pa.ipc.new_stream(self._sink, schema, options=_IPC)

    def write(self, table: pa.Table, max_chunksize: int | None = None) -> None:
        if table.num_rows == 0:
            return
        if not table.schema.equals(self.schema):
            table = table.cast(self.schema)
        self._writer.write_table(table, max_chunksize=max_chunksize)
        self.num_rows += table.num_rows
        self.nbytes += table.nbytes

    def finish(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self.spill.bytes_written += self._sink.tell()
            self._sink.close()
            self._writer = None

    def batches(self) -> Iterable[pa.RecordBatch]:
        self.finish()
        with pa.OSFile(self.path, "rb") as source:
            yield from pa.ipc.open_stream(source)

    def tables(self) -> Iterable[pa.Table]:
        for batch in self.batches():
            yield pa.Table.from_batches([batch])

    def read_all(self) -> pa.Table:
        self.finish()
        with pa.OSFile(self.path, "rb") as source:
            return pa.ipc.open_stream(source).read_all()

    def remove(self) -> None:
        self.finish()
        try:
            os.remove(self.path)
        except FileNotFoundError:
            pass
