"""Load files: the rows a small load gives many tablets, in one file; each tablet's rowset a slice.

A small INSERT into a table of many tablets touches hundreds of tablets with a few rows each.
Writing a segment file (pages, zone maps, short key index, fsync) per tablet costs milliseconds
of Python per tablet; a load file costs one vectorised sort and one write for the whole load:

    <root>/data/loads/<txn_id>_<index_id>.arrow
        Arrow IPC file, uncompressed: the load's rows for one materialized index, in the index's
        tablet schema, sorted by (tablet, key) and pre-aggregated per tablet by the data model
        (memtable.flush_grouped), so each tablet's rows are one contiguous, sorted slice.

A rowset with `RowsetMeta.load_file` set has no segment files: its rows are
[load_offset, load_offset + num_rows) of that file. `LoadFileReader` scans such a slice with the
segment reader's contract (predicates, later DELETE conditions; no indexes: a slice is small).
Compaction reads slices like any rowset and writes segments; a load file is deleted when no
rowset of any tablet references it any more (`LoadFiles`, reference counts rebuilt at start-up
from the published rowsets). Doris writes a segment per tablet; this file is minidoris's own.
"""

from __future__ import annotations

import os
import threading

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc

from storage.durable import fsync, fsync_path
from storage.errors import StorageError
from storage.predicate import ColumnPredicate, prepare
from storage.row_filter import row_mask
from storage.rowset import RowsetMeta
from storage.schema import TabletSchema
from storage.types import DataType, from_arrow
from storage.stats import ScanStats

DIRECTORY = "loads"
SMALL_ROWSET_ROWS = 256  # a load averaging fewer rows per touched tablet writes a load file


def file_name(txn_id: int, index_id: int) -> str:
    return f"{int(txn_id)}_{int(index_id)}.arrow"


class LoadFiles:
    """The engine's load files: writing, opening (memory-mapped, shared), reference counts."""

    def __init__(self, directory: str):
        self.directory = directory
        os.makedirs(directory, exist_ok=True)
        self._lock = threading.Lock()
        self._refs: dict[str, set[tuple[int, int]]] = {}  # file -> {(tablet, rowset)}
        self._open: dict[str, pa.Table] = {}

    def path(self, name: str) -> str:
        return os.path.join(self.directory, name)

    def write(self, name: str, table: pa.Table) -> int:
        """Write `table` as the load file `name` and fsync it (and the directory); bytes.
        The written rows are kept as the file's open table: the slices' first reads (the
        load's compaction, queries) do not map and open the file again (a load file is at
        most SMALL_ROWSET_ROWS rows per tablet; it goes when its last slice is released)."""
        path = self.path(name)
        with open(path, "xb") as f:
            with ipc.new_file(f, table.schema) as writer:
                writer.write_table(table)
            f.flush()
            fsync(f.fileno())
            size = f.tell()
        fsync_path(self.directory)
        with self._lock:
            self._refs.setdefault(name, set())
            self._open[name] = table
        return size

    def table(self, name: str) -> pa.Table:
        with self._lock:
            table = self._open.get(name)
        if table is None:
            try:
                source = pa.memory_map(self.path(name), "r")
                table = ipc.open_file(source).read_all()
            except (OSError, pa.ArrowInvalid) as exc:
                raise StorageError(f"Load file {name} cannot be read: {exc}") from exc
            with self._lock:
                table = self._open.setdefault(name, table)
        return table

    def acquire(self, name: str, tablet_id: int, rowset_id: int) -> None:
        with self._lock:
            self._refs.setdefault(name, set()).add((tablet_id, rowset_id))

    def release(self, name: str, tablet_id: int, rowset_id: int) -> None:
        """The rowset no longer reads `name`; the file goes when no rowset does."""
        with self._lock:
            refs = self._refs.get(name)
            if refs is None:
                return
            refs.discard((tablet_id, rowset_id))
            if refs:
                return
            del self._refs[name]
            self._open.pop(name, None)
        try:
            os.remove(self.path(name))
        except FileNotFoundError:
            pass

    def exists(self, name: str) -> bool:
        return os.path.exists(self.path(name))

    def remove_unreferenced(self) -> list[str]:
        """At start-up, after every tablet is restored: delete files no rowset references
        (a load that crashed before its publish)."""
        with self._lock:
            live = {n for n, refs in self._refs.items() if refs}
        removed = []
        for name in os.listdir(self.directory):
            if name not in live:
                os.remove(self.path(name))
                removed.append(name)
        if removed:
            fsync_path(self.directory)
        return removed


def gather_slices(files: LoadFiles, slices: list[RowsetMeta], columns: list[str]) -> pa.Table:
    """The rows of load-file slices (rowsets with `load_file`), slice after slice, `columns` in
    order: one `take` over the memory-mapped files (storage/slice_compaction.py,
    storage/slice_unit.py). The files must store the columns in one type (callers check)."""
    names = list(dict.fromkeys(r.load_file for r in slices))
    tables = [files.table(n).select(columns) for n in names]
    base = dict(zip(names, np.cumsum([0] + [t.num_rows for t in tables[:-1]]).tolist()))
    source = pa.concat_tables(tables) if len(tables) > 1 else tables[0]
    starts = np.fromiter((base[r.load_file] + r.load_offset for r in slices), np.int64,
                         len(slices))
    lengths = np.fromiter((r.num_rows for r in slices), np.int64, len(slices))
    # each slice's positions: its start + 0 .. length - 1, slice after slice
    offsets = np.repeat(starts - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    return source.take(pa.array(offsets + np.arange(int(lengths.sum()), dtype=np.int64)))


class LoadFileReader:
    """One rowset's slice of a load file, scanned as a segment would be."""

    def __init__(self, table: pa.Table, schema: TabletSchema):
        self.table = table
        self.schema = schema
        self.num_rows = table.num_rows
        self.names = frozenset(table.column_names)

    def _type(self, name: str) -> DataType:
        """A stored column's type: the schema's, or (renamed since: storage/column_mapping.py)
        the slice's own."""
        if self.schema.has_column(name):
            return self.schema.column(name).type
        return from_arrow(self.table.schema.field(name).type)

    def scan(self, columns: list[str], predicates: list[ColumnPredicate], stats: ScanStats,
             deletes: list[list[ColumnPredicate]] = (), indexes=None,
             keep=None) -> pa.Table:
        """As SegmentReader.scan; `keep`: the rows a delete bitmap leaves (a Keep)."""
        table = self.table
        for name in [*columns, *(p.column for p in predicates),
                     *(p.column for conj in deletes for p in conj)]:
            if name not in self.names:
                raise StorageError(f"Column {name} is not stored in the load file slice")
        stats.segments_total += 1
        stats.segments_read += 1
        stats.rows_total += self.num_rows
        stats.rows_read += self.num_rows
        arrays: dict[str, pa.Array] = {}

        def column(name: str) -> pa.Array:
            arr = arrays.get(name)
            if arr is None:
                arr = arrays[name] = table.column(name).combine_chunks()
            return arr

        mask = None
        if keep is not None:
            mask = keep.mask
            stats.rows_del_filtered += self.num_rows - int(np.count_nonzero(mask))
        if predicates:
            prepared = [prepare(p, self._type(p.column)) for p in predicates]
            live = row_mask(prepared, column, self.num_rows)
            before = self.num_rows if mask is None else int(np.count_nonzero(mask))
            mask = live if mask is None else mask & live
            stats.rows_conditions_filtered += before - int(np.count_nonzero(mask))
        if deletes:
            deleted = np.zeros(self.num_rows, dtype=bool)
            for conj in deletes:
                prepared = [prepare(p, self._type(p.column)) for p in conj]
                deleted |= row_mask(prepared, column, self.num_rows)
            if mask is not None:
                deleted &= mask
            stats.rows_del_filtered += int(np.count_nonzero(deleted))
            mask = ~deleted if mask is None else mask & ~deleted
        if not columns:
            count = self.num_rows if mask is None else int(np.count_nonzero(mask))
            return pa.table({"_": pa.nulls(count)}).select([])
        out = pa.Table.from_arrays([table.column(c) for c in columns], names=list(columns))
        return out if mask is None else out.filter(pa.array(mask))
