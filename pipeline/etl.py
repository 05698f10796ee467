"""Spark Load's executor-side work, one Arrow batch at a time (mapInArrow functions).

`convert(spec)`: source batches -> the table's rows, converted, routed and bucketed.
    CSV lines (Spark's text source) are split by pyarrow's CSV reader exactly as a Stream Load
    body is (`server/http/load_source.read_source`); Parquet columns arrive typed. Then
    `server/http/load_rows.prepare_rows` (derived SET columns, Doris's non-strict CAST, rejects,
    WHERE, partition checks) and `catalog/load.place_rows` (defaults, strict cast, partition and
    bucket by the server's own rules and hash). Each row gets `__pb` = partition index << 32 |
    bucket. Every input batch also emits one stats row (`__pb` = -1) with its counts and first
    error lines, so the counts travel with the data and a retried task is counted once.
`write(spec)`: after Spark's shuffle by `__pb` and sort within partitions, each (partition,
    bucket) group, as each materialized index stores it (`catalog/index_rows.py`: a sync MV's
    computed columns added), goes through storage's memtable (`flush`: sort by key, pre-aggregate by the
    model) and segment writer (`write_segments`: every index) once per materialized index, into
    `<output_dir>/<task attempt>/<tablet_id>/`. Out come manifest rows: one per tablet written,
    one per task with the summed stats.
"""

from __future__ import annotations

import json
import os
import uuid
from datetime import datetime
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from catalog.index_rows import index_rows
from catalog.load import place_rows
from catalog.model import OlapTable
from executor.expressions import EvalContext
from server.http.load_options import StreamLoadOptions, parse_columns
from server.http.load_rows import prepare_rows
from server.http.load_source import SourceRows, read_source
from storage.durable import fsync_path
from storage.memtable import flush
from storage.rowset import write_segments
from storage.segment import SegmentOptions

STATS_COLUMNS = [("__total", pa.int64()), ("__filtered", pa.int64()),
                 ("__unselected", pa.int64()), ("__errors", pa.string())]
MANIFEST_DDL = ("kind STRING, tablet_id BIGINT, partition_id BIGINT, files STRING, "
                "segment_rows STRING, num_rows BIGINT, total BIGINT, filtered BIGINT, "
                "unselected BIGINT, errors STRING")
_MAX_ERROR_LINES = 1000


def table_of(spec: dict) -> OlapTable:
    return OlapTable.from_dict(spec["table"])


def load_options(spec: dict) -> StreamLoadOptions:
    """The load's clauses as the Stream Load options the shared conversion code reads."""
    # Stream Load's own header parsing: hex separators (\x01), ratio and strict mode checks
    o = StreamLoadOptions.from_headers({
        "column_separator": spec["column_separator"],
        "max_filter_ratio": str(spec["max_filter_ratio"]),
        "strict_mode": "true" if spec.get("strict_mode") else "false",
        "partitions": ",".join(spec.get("partitions") or [])})
    o.line_delimiter = "\n"  # Spark's text source has already split lines at the delimiter
    derived = [f"{name} = {sql}" for name, sql in spec.get("set") or []]
    sources = list(spec.get("columns") or [])
    if derived and not sources:  # no column list: the file holds the other table columns
        targets = {name.lower() for name, _ in spec["set"]}
        sources = [c["name"] for c in spec["table"]["columns"] if c["name"].lower() not in targets]
    if sources or derived:
        o.columns = parse_columns(", ".join(sources + derived))
    if spec.get("where"):
        import sqlglot
        o.where = sqlglot.parse_one(spec["where"], dialect="doris")
    return o


def output_schema(table: OlapTable) -> pa.Schema:
    fields = [pa.field(c.name, c.type.arrow()) for c in table.columns]
    fields.append(pa.field("__pb", pa.int64()))
    fields += [pa.field(n, t) for n, t in STATS_COLUMNS]
    return pa.schema(fields)


def _source(batch: pa.RecordBatch, spec: dict, opts: StreamLoadOptions, names: list[str]) -> SourceRows:
    if spec["format"] == "csv":
        lines = batch.column(0)
        if len(lines) == 0:
            return SourceRows(pa.table({n: pa.array([], pa.string()) for n in names}))
        joined = pc.binary_join_element_wise(lines, pa.scalar(""), pa.scalar("\n"))
        offsets = np.frombuffer(joined.buffers()[1], np.int32)[joined.offset:joined.offset + len(joined) + 1]
        body = joined.buffers()[2].to_pybytes()[offsets[0]:offsets[-1]]
        return read_source(body, opts, names)
    table = pa.Table.from_batches([batch])
    by_lower = {c.lower(): c for c in table.column_names}
    columns = {n: table.column(by_lower[n.lower()]) if n.lower() in by_lower
               else pa.nulls(table.num_rows, pa.string()) for n in names}
    return SourceRows(pa.table(columns))


def convert(spec: dict):
    """The mapInArrow function of the conversion stage."""
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        table = table_of(spec)
        opts = load_options(spec)
        names = [n for n, e in opts.columns if e is None] if opts.columns \
            else [c.name for c in table.columns]
        schema = output_schema(table)
        now = datetime.fromisoformat(spec["now"])
        ctx = EvalContext(now=now, time_zone=spec["time_zone"])
        for batch in batches:
            prepared = prepare_rows(table, _source(batch, spec, opts, names), opts, ctx)
            rows = prepared.rows
            if rows.num_rows:
                full, part_idx, buckets = place_rows(table, rows, now)
                n = full.num_rows
                arrays = [full.column(c.name).combine_chunks().cast(schema.field(c.name).type)
                          for c in table.columns]
                arrays.append(pa.array((part_idx << 32) | buckets, pa.int64()))
                arrays += [pa.nulls(n, t) for _, t in STATS_COLUMNS]
                yield pa.RecordBatch.from_arrays(arrays, schema=schema)
            stats = [pa.nulls(1, f.type) for f in schema][:len(table.columns)]
            stats.append(pa.array([-1], pa.int64()))
            stats += [pa.array([prepared.total], pa.int64()), pa.array([prepared.filtered], pa.int64()),
                      pa.array([prepared.unselected], pa.int64()),
                      pa.array(["\n".join(prepared.errors)], pa.string())]
            yield pa.RecordBatch.from_arrays(stats, schema=schema)
    return run


class _TabletWriter:
    """Writes one (partition, bucket) group per materialized index into the task's directory."""

    def __init__(self, spec: dict, table: OlapTable):
        self.spec, self.table = spec, table
        self.parts = table.sorted_partitions()
        seg = spec["segment"]
        self.options = SegmentOptions(seg["page_size"], seg["short_key_interval"])
        self.max_segment_size = seg["max_segment_size"]
        self.root = os.path.join(spec["output_dir"], "tasks", _attempt_name())

    def write(self, pb: int, chunks: list[pa.Table]) -> Iterator[dict]:
        p = self.parts[pb >> 32]
        bucket = pb & 0xFFFFFFFF
        data = pa.concat_tables(chunks).select([c.name for c in self.table.columns])
        for index_id, tablet_ids in p.tablets_by_index.items():
            tid = tablet_ids[bucket]
            schema = self.table.tablet_schema(index_id)
            directory = os.path.join(self.root, str(tid))
            os.makedirs(directory, exist_ok=True)
            rows_of_index = index_rows(self.table, self.table.indexes[index_id], data)
            names, rows, _ = write_segments(directory, 0, flush(rows_of_index, schema), schema,
                                            self.options, self.max_segment_size)
            for name in names:
                fsync_path(os.path.join(directory, name))
            yield {"kind": "tablet", "tablet_id": tid, "partition_id": p.partition_id,
                   "files": json.dumps([os.path.join(directory, n) for n in names]),
                   "segment_rows": json.dumps(rows), "num_rows": int(sum(rows))}


def _attempt_name() -> str:
    from pyspark import TaskContext
    ctx = TaskContext.get()
    if ctx is None:
        return uuid.uuid4().hex
    return f"{ctx.partitionId()}-{ctx.attemptNumber()}-{uuid.uuid4().hex[:8]}"


def write(spec: dict):
    """The mapInArrow function of the write stage (input sorted by `__pb` per partition)."""
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        table = table_of(spec)
        writer = _TabletWriter(spec, table)
        out: list[dict] = []
        stats = {"total": 0, "filtered": 0, "unselected": 0}
        errors: list[str] = []
        current, chunks = None, []
        for batch in batches:
            pb = batch.column("__pb").to_numpy()
            starts = np.concatenate(([0], np.flatnonzero(np.diff(pb)) + 1)) if len(pb) else []
            ends = list(starts[1:]) + [len(pb)] if len(pb) else []
            for s, e in zip(starts, ends):
                key = int(pb[s])
                run_rows = pa.Table.from_batches([batch.slice(int(s), int(e - s))])
                if key < 0:
                    for name in stats:
                        stats[name] += int(pc.sum(run_rows.column(f"__{name}")).as_py() or 0)
                    for text in run_rows.column("__errors").to_pylist():
                        if text and len(errors) < _MAX_ERROR_LINES:
                            errors += text.split("\n")[:_MAX_ERROR_LINES - len(errors)]
                    continue
                if key != current:
                    if chunks:
                        out += writer.write(current, chunks)
                    current, chunks = key, []
                chunks.append(run_rows)
        if chunks:
            out += writer.write(current, chunks)
        out.append({"kind": "stats", **stats, "errors": "\n".join(errors)})
        rows = {name: [r.get(name) for r in out] for name in
                ("kind", "tablet_id", "partition_id", "files", "segment_rows", "num_rows",
                 "total", "filtered", "unselected", "errors")}
        yield pa.RecordBatch.from_pydict(rows, schema=_MANIFEST_SCHEMA)
    return run


_MANIFEST_SCHEMA = pa.schema([
    ("kind", pa.string()), ("tablet_id", pa.int64()), ("partition_id", pa.int64()),
    ("files", pa.string()), ("segment_rows", pa.string()), ("num_rows", pa.int64()),
    ("total", pa.int64()), ("filtered", pa.int64()), ("unselected", pa.int64()),
    ("errors", pa.string())])
