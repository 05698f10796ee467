"""Spark Load's executor-side work (mapInArrow functions of its two stages; no shuffle).

`convert(spec, splits)`: stage 1, one task per input split (`pipeline/splits.py`: the task
    reads its byte range or row group itself) or, for what only Spark can read, over Spark's
    reader's batches. CSV text is split by Stream Load's own reader
    (`server/http/load_source.read_source`); then `server/http/load_rows.prepare_rows` (derived
    SET columns, Doris's non-strict CAST, rejects, WHERE, partition checks) and
    `catalog/load.place_rows` (defaults, strict cast, partition and bucket by the server's own
    rules and hash). The task's rows, ordered by `pb` = partition index << 32 | bucket, go to
    one Arrow IPC file (a run) in the job directory; out come small rows: (pb, run file, offset,
    length) per group and one row of counts and first error lines, so the counts travel with
    the task's result and a retried task is counted once.
`write(spec, assignments)`: stage 2, the driver deals the (partition, bucket) groups to tasks
    (`collect_runs`, `assign`); each group's slices of the runs (memory-mapped, no copy), as
    each materialized index stores them (`catalog/index_rows.py`: a sync MV's computed columns
    added), go through storage's memtable (`flush`: sort by key, pre-aggregate by the model)
    and segment writer (`write_segments`: every index) once per materialized index, into
    `<output_dir>/tasks/<task attempt>/<tablet_id>/`. Out come manifest rows, one per tablet.
Rows never pass through Spark's row format: Spark schedules tasks and carries a few hundred
small rows; Spark's shuffle (and its Arrow <-> row conversion) is not used.
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
from pipeline.splits import read_split, typed_source
from server.http.load_options import StreamLoadOptions, parse_columns
from server.http.load_rows import prepare_rows
from server.http.load_source import SourceRows, read_source
from storage.durable import fsync_path
from storage.memtable import flush
from storage.rowset import write_segments
from storage.segment import SegmentOptions

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



def _spark_source(batch: pa.RecordBatch, spec: dict, opts: StreamLoadOptions,
                  names: list[str]) -> SourceRows:
    """A batch of Spark's reader (the fallback of `splits.plan_splits`): lines or typed columns."""
    if spec["format"] == "csv":
        lines = batch.column(0)
        if len(lines) == 0:
            return SourceRows(pa.table({n: pa.array([], pa.string()) for n in names}))
        joined = pc.binary_join_element_wise(lines, pa.scalar(""), pa.scalar("\n"))
        offsets = np.frombuffer(joined.buffers()[1], np.int32)[joined.offset:joined.offset + len(joined) + 1]
        body = joined.buffers()[2].to_pybytes()[offsets[0]:offsets[-1]]
        return read_source(body, opts, names)
    return typed_source(pa.Table.from_batches([batch]), names)


_INTEGERS = ("TINYINT", "SMALLINT", "INT", "BIGINT")


def _typed_columns(table: OlapTable, spec: dict, names: list[str]) -> dict[str, pa.DataType]:
    """Source columns of integer table columns, which CSV splits parse straight to int64: the
    text path's first step is that same Arrow parse (`casts._to_int`), then the range check,
    which both paths share. Not when SET or WHERE expressions read the source values."""
    if spec["format"] != "csv" or spec.get("set") or spec.get("where"):
        return {}
    kinds = {c.name.lower(): c.type.kind for c in table.columns}
    return {n: pa.int64() for n in names if kinds.get(n.lower()) in _INTEGERS}


def _task_dir(spec: dict) -> str:
    path = os.path.join(spec["output_dir"], "tasks", _attempt_name())
    os.makedirs(path, exist_ok=True)
    return path


def convert(spec: dict, splits: list[tuple] | None = None):
    """The mapInArrow function of the conversion stage (module docstring). Without `splits`
    its input is Spark's reader's batches; with them, batches of split ids (`id`)."""
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        table = table_of(spec)
        opts = load_options(spec)
        names = [n for n, e in opts.columns if e is None] if opts.columns \
            else [c.name for c in table.columns]
        if splits is not None:
            opts.line_delimiter = spec["line_delimiter"]  # the task reads the file's bytes
            typed = _typed_columns(table, spec, names)
            sources = (read_split(splits[i], spec, opts, names, typed)
                       for b in batches for i in b.column(0).to_pylist())
        else:
            sources = (_spark_source(b, spec, opts, names) for b in batches)
        now = datetime.fromisoformat(spec["now"])
        ctx = EvalContext(now=now, time_zone=spec["time_zone"])
        schema = pa.schema([pa.field(c.name, c.type.arrow()) for c in table.columns])
        stats = {"total": 0, "filtered": 0, "unselected": 0}
        errors: list[str] = []
        parts, pbs = [], []
        for source in sources:
            prepared = prepare_rows(table, source, opts, ctx)
            for name in stats:
                stats[name] += getattr(prepared, name)
            errors += prepared.errors[:max(0, _MAX_ERROR_LINES - len(errors))]
            if prepared.rows.num_rows:
                full, part_idx, buckets = place_rows(table, prepared.rows, now)
                parts.append(full.select(schema.names).cast(schema))
                pbs.append((part_idx.astype(np.int64) << 32) | buckets)
        out = [{"pb": pb, "path": path, "offset": offset, "length": length}
               for pb, offset, length, path in (_write_run(spec, parts, pbs) if parts else ())]
        out.append({"pb": -1, **stats, "errors": "\n".join(errors)})
        yield pa.RecordBatch.from_pylist(out, schema=RUN_SCHEMA)
    return run


def _write_run(spec: dict, parts: list[pa.Table], pbs: list[np.ndarray]):
    """The task's rows ordered by (partition, bucket) in one Arrow IPC file (a run); yields
    (pb, offset, length, path) per group. A retried task writes another file: only the runs
    its successful attempt reports are read."""
    pb = np.concatenate(pbs)
    order = np.argsort(pb, kind="stable")
    pb = pb[order]
    rows = pa.concat_tables(parts).take(pa.array(order))
    path = os.path.join(_task_dir(spec), "run.arrow")
    with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, rows.schema) as writer:
        writer.write_table(rows, max_chunksize=1 << 20)
    starts = np.concatenate(([0], np.flatnonzero(np.diff(pb)) + 1))
    ends = np.append(starts[1:], len(pb))
    for s, e in zip(starts.tolist(), ends.tolist()):
        yield int(pb[s]), s, e - s, path


def collect_runs(rows: list[dict]) -> tuple[dict[int, list[tuple]], dict]:
    """Stage 1's rows as runs by (partition, bucket) and the load's summed counts and errors."""
    runs: dict[int, list[tuple]] = {}
    stats = {"total": 0, "filtered": 0, "unselected": 0, "errors": []}
    for r in rows:
        if r["pb"] >= 0:
            runs.setdefault(r["pb"], []).append((r["path"], r["offset"], r["length"]))
            continue
        for name in ("total", "filtered", "unselected"):
            stats[name] += r[name] or 0
        if r["errors"] and len(stats["errors"]) < _MAX_ERROR_LINES:
            stats["errors"] += r["errors"].split("\n")[:_MAX_ERROR_LINES - len(stats["errors"])]
    return runs, stats


def assign(runs: dict[int, list[tuple]], tasks: int) -> list[list[tuple]]:
    """The (partition, bucket) groups dealt to `tasks` write tasks, the largest first to the
    least loaded task."""
    load = [0] * tasks
    out: list[list[tuple]] = [[] for _ in range(tasks)]
    for pb, pieces in sorted(runs.items(), key=lambda kv: -sum(p[2] for p in kv[1])):
        i = load.index(min(load))
        out[i].append((pb, pieces))
        load[i] += sum(p[2] for p in pieces)
    return [a for a in out if a]


class _TabletWriter:
    """Writes one (partition, bucket) group per materialized index into the task's directory."""

    def __init__(self, spec: dict, table: OlapTable):
        self.spec, self.table = spec, table
        self.parts = table.sorted_partitions()
        seg = spec["segment"]
        self.options = SegmentOptions(seg["page_size"], seg["short_key_interval"])
        self.max_segment_size = seg["max_segment_size"]
        self.root = _task_dir(spec)

    def write(self, pb: int, data: pa.Table) -> Iterator[dict]:
        p = self.parts[pb >> 32]
        bucket = pb & 0xFFFFFFFF
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
            yield {"tablet_id": tid, "partition_id": p.partition_id,
                   "files": json.dumps([os.path.join(directory, n) for n in names]),
                   "segment_rows": json.dumps(rows), "num_rows": int(sum(rows))}


def _attempt_name() -> str:
    from pyspark import TaskContext
    ctx = TaskContext.get()
    if ctx is None:
        return uuid.uuid4().hex
    return f"{ctx.stageId()}-{ctx.partitionId()}-{ctx.attemptNumber()}-{uuid.uuid4().hex[:8]}"


def write(spec: dict, assignments: list[list[tuple]]):
    """The mapInArrow function of the write stage: its input is batches of task ids (`id`);
    task i writes the groups `assignments[i]`, each from its runs' slices (memory-mapped)."""
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        writer = _TabletWriter(spec, table_of(spec))
        opened: dict[str, pa.Table] = {}
        out: list[dict] = []
        for batch in batches:
            for task in batch.column(0).to_pylist():
                for pb, pieces in assignments[task]:
                    chunks = []
                    for path, offset, length in pieces:
                        if path not in opened:
                            opened[path] = pa.ipc.open_file(pa.memory_map(path)).read_all()
                        chunks.append(opened[path].slice(offset, length))
                    out += writer.write(pb, pa.concat_tables(chunks))
        yield pa.RecordBatch.from_pydict({n: [r[n] for r in out] for n in MANIFEST_SCHEMA.names},
                                         schema=MANIFEST_SCHEMA)
    return run


RUN_SCHEMA = pa.schema([
    ("pb", pa.int64()), ("path", pa.string()), ("offset", pa.int64()), ("length", pa.int64()),
    ("total", pa.int64()), ("filtered", pa.int64()), ("unselected", pa.int64()),
    ("errors", pa.string())])
RUN_DDL = ("pb BIGINT, path STRING, offset BIGINT, length BIGINT, total BIGINT, "
           "filtered BIGINT, unselected BIGINT, errors STRING")
MANIFEST_SCHEMA = pa.schema([
    ("tablet_id", pa.int64()), ("partition_id", pa.int64()), ("files", pa.string()),
    ("segment_rows", pa.string()), ("num_rows", pa.int64())])
MANIFEST_DDL = "tablet_id BIGINT, partition_id BIGINT, files STRING, segment_rows STRING, num_rows BIGINT"
