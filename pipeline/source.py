"""The PySpark data source `doris`, with the Spark Doris Connector's option names.

    spark.dataSource.register(DorisDataSource)
    df = spark.read.format("doris").option("doris.fenodes", "127.0.0.1:8030") \\
        .option("doris.table.identifier", "db.t").option("user", "root").option("password", "") \\
        .load()
    df.write.format("doris").option(...).mode("append").save()

Reading: the driver asks the server for the table's schema (`/api/{db}/{t}/_schema`) and a
scan plan (`/api/{db}/{t}/_query_plan` with `select <doris.read.fields> from db.t where
<doris.filter.query> and <pushed filters>`): the tablets that survive partition and bucket
pruning, each at the version planned (one snapshot). Tablets are grouped by backend into input
partitions of at most `doris.request.tablet.size` tablets; each Spark task streams its tablets'
rows as Arrow record batches of `doris.batch.size` rows from `/api/_tablet_scan`. Spark SQL
filters are pushed into the plan when `spark.sql.python.filterPushdown.enabled` is true.

Writing: each task sends its rows as Stream Loads (`doris.sink.batch.size` rows each, CSV with
`sink.properties.*` as headers) with `two_phase_commit: true`, under deterministic labels
`<doris.sink.label.prefix>_<partition>_<n>`: a retried task finds its label and aborts the
pre-committed leftover (or skips a load a previous run already committed). The driver commits
every transaction through `/api/{db}/_stream_load_2pc` when all tasks succeeded, and aborts them
otherwise, so a failed job leaves nothing visible and a retried job commits once.
"""

from __future__ import annotations

import base64
import io
import json
import sys
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass
from typing import Iterator

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
from pyspark.sql.datasource import (DataSource, DataSourceArrowWriter, DataSourceReader,
                                    EqualTo, GreaterThan, GreaterThanOrEqual, In, InputPartition,
                                    IsNotNull, IsNull, LessThan, LessThanOrEqual, Not,
                                    StringStartsWith, WriterCommitMessage)

from pipeline.spark_types import spark_type
from storage.types import DataType

DEFAULT_TABLET_SIZE = 1
DEFAULT_BATCH_SIZE = 4064
DEFAULT_SINK_BATCH_SIZE = 100000


class DorisError(RuntimeError):
    """A request the server refused, with its message."""


@dataclass
class _Conn:
    fenodes: list[str]
    user: str
    password: str

    @staticmethod
    def of(options) -> "_Conn":
        nodes = options.get("doris.fenodes") or options.get("fenodes")
        if not nodes:
            raise DorisError("option doris.fenodes is required")
        return _Conn([n.strip() for n in nodes.split(",") if n.strip()],
                     options.get("user") or options.get("doris.request.auth.user") or "root",
                     options.get("password") or options.get("doris.request.auth.password") or "")

    def request(self, method: str, path: str, body: bytes | None = None,
                headers: dict | None = None, timeout: float = 600):
        """The open response of the first frontend that answers."""
        auth = base64.b64encode(f"{self.user}:{self.password}".encode()).decode()
        h = {"Authorization": f"Basic {auth}", **(headers or {})}
        last: Exception | None = None
        for node in self.fenodes:
            req = urllib.request.Request(f"http://{node}{path}", data=body, method=method, headers=h)
            try:
                return urllib.request.urlopen(req, timeout=timeout)
            except urllib.error.HTTPError as e:
                try:
                    payload = json.loads(e.read())
                    message = payload.get("msg") or payload.get("exception") or str(payload)
                except ValueError:
                    message = str(e)
                raise DorisError(message) from None
            except OSError as e:
                last = e
        raise DorisError(f"no frontend of {self.fenodes} answers: {last}")

    def json(self, method: str, path: str, payload: dict | None = None,
             headers: dict | None = None) -> dict:
        body = json.dumps(payload).encode() if payload is not None else None
        with self.request(method, path, body, headers) as resp:
            return json.loads(resp.read())


def _identifier(options) -> tuple[str, str]:
    ident = options.get("doris.table.identifier") or options.get("table.identifier")
    if not ident or "." not in ident:
        raise DorisError("option doris.table.identifier must be <db>.<table>")
    db, table = ident.split(".", 1)
    return db.strip("`"), table.strip("`")


def _doris_type(p: dict) -> DataType:
    kind = p["type"].upper()
    if kind == "DECIMAL":
        return DataType("DECIMAL", precision=int(p.get("precision", 27)), scale=int(p.get("scale", 9)))
    return DataType(kind)


class DorisDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "doris"

    def _columns(self) -> list[tuple[str, DataType]]:
        db, table = _identifier(self.options)
        props = _Conn.of(self.options).json("GET", f"/api/{db}/{table}/_schema")["properties"]
        columns = [(p["name"], _doris_type(p)) for p in props]
        fields = self.options.get("doris.read.fields")
        if fields:
            by_lower = {n.lower(): (n, t) for n, t in columns}
            wanted = [f.strip().strip("`") for f in fields.split(",") if f.strip()]
            missing = [f for f in wanted if f.lower() not in by_lower]
            if missing:
                raise DorisError(f"doris.read.fields: unknown column {missing[0]}")
            columns = [by_lower[f.lower()] for f in wanted]
        return columns

    def schema(self) -> str:
        return ", ".join(f"`{n}` {spark_type(t)}" for n, t in self._columns())

    def reader(self, schema) -> "DorisReader":
        # PySpark refuses a reader with pushFilters when spark.sql.python.filterPushdown.enabled
        # is false, and does not tell reader() the setting (PySpark 4.x): with it on, the reader
        # is made by the filter pushdown worker (pyspark.sql.worker.data_source_pushdown_
        # filters); otherwise by the planning worker, which holds the setting in its local
        # `enable_pushdown`. Without pushdown, a reader without pushFilters
        # (doris.filter.query still filters on the server).
        frame = sys._getframe(1)
        pushdown = frame.f_globals.get("__name__", "").endswith("data_source_pushdown_filters") \
            or frame.f_locals.get("enable_pushdown") is True
        cls = DorisPushdownReader if pushdown else DorisReader
        return cls(dict(self.options), schema)

    def writer(self, schema, overwrite: bool) -> "DorisWriter":
        if overwrite:
            raise DorisError("the doris sink only appends (mode overwrite is not supported)")
        return DorisWriter(dict(self.options), schema)


# -- reading ---------------------------------------------------------------------------------
def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _literal(v) -> str | None:
    if v is None:
        return None
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, (int, float)):
        return repr(v)
    return "'" + str(v).replace("\\", "\\\\").replace("'", "\\'") + "'"


_OPS = {EqualTo: "=", GreaterThan: ">", GreaterThanOrEqual: ">=", LessThan: "<",
        LessThanOrEqual: "<="}


def filter_sql(f) -> str | None:
    """A Spark filter as Doris SQL, or None when it cannot be pushed."""
    if len(getattr(f, "attribute", ("",))) != 1:
        return None
    if type(f) in _OPS:
        lit = _literal(f.value)
        return None if lit is None else f"{_quote(f.attribute[0])} {_OPS[type(f)]} {lit}"
    if isinstance(f, In):
        lits = [_literal(v) for v in f.value]
        if not lits or any(x is None for x in lits):
            return None
        return f"{_quote(f.attribute[0])} IN ({', '.join(lits)})"
    if isinstance(f, IsNull):
        return f"{_quote(f.attribute[0])} IS NULL"
    if isinstance(f, IsNotNull):
        return f"{_quote(f.attribute[0])} IS NOT NULL"
    if isinstance(f, StringStartsWith):
        prefix = str(f.value).replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        return f"{_quote(f.attribute[0])} LIKE {_literal(prefix + '%')}"
    if isinstance(f, Not):
        inner = filter_sql(f.child)
        return None if inner is None else f"NOT ({inner})"
    return None


class DorisPartition(InputPartition):
    def __init__(self, plan: str, tablet_ids: list[int]):
        super().__init__(tablet_ids)
        self.plan = plan
        self.tablet_ids = tablet_ids


class DorisReader(DataSourceReader):
    def __init__(self, options: dict, schema):
        self.options = options
        self.schema = schema
        self.pushed: list[str] = []

    def query_sql(self) -> str:
        db, table = _identifier(self.options)
        fields = ", ".join(_quote(f.name) for f in self.schema.fields)
        conditions = [f"({c})" for c in [self.options.get("doris.filter.query")] + self.pushed if c]
        where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
        return f"SELECT {fields} FROM {_quote(db)}.{_quote(table)}{where}"

    def partitions(self) -> list[DorisPartition]:
        db, table = _identifier(self.options)
        reply = _Conn.of(self.options).json("POST", f"/api/{db}/{table}/_query_plan",
                                            {"sql": self.query_sql()})
        data = reply.get("data") or reply
        size = int(self.options.get("doris.request.tablet.size") or DEFAULT_TABLET_SIZE)
        by_backend: dict[str, list[int]] = {}
        for tid, info in sorted(data["partitions"].items(), key=lambda kv: int(kv[0])):
            by_backend.setdefault(info["routings"][0], []).append(int(tid))
        parts = [DorisPartition(data["opaqued_query_plan"], ids[i:i + size])
                 for ids in by_backend.values() for i in range(0, len(ids), max(size, 1))]
        return parts or [DorisPartition(data["opaqued_query_plan"], [])]

    def read(self, partition: DorisPartition) -> Iterator[pa.RecordBatch]:
        from pyspark.sql.pandas.types import to_arrow_schema
        target = to_arrow_schema(self.schema)
        if not partition.tablet_ids:
            return
        batch_size = int(self.options.get("doris.batch.size") or DEFAULT_BATCH_SIZE)
        conn = _Conn.of(self.options)
        body = json.dumps({"opaqued_query_plan": partition.plan, "batch_size": batch_size,
                           "tablet_ids": partition.tablet_ids}).encode()
        with conn.request("POST", "/api/_tablet_scan", body,
                          {"Content-Type": "application/json"}) as resp:
            for batch in pa.ipc.open_stream(resp):
                yield _conform(batch, target)


class DorisPushdownReader(DorisReader):
    """The reader when Spark pushes filters: each one Doris can evaluate joins the plan's WHERE
    (so the server prunes partitions and buckets with it); the others stay with Spark."""

    def pushFilters(self, filters):
        for f in filters:
            sql = filter_sql(f)
            if sql is None:
                yield f
            else:
                self.pushed.append(sql)


def _conform(batch: pa.RecordBatch, target: pa.Schema) -> pa.RecordBatch:
    arrays = []
    for field, arr in zip(target, batch.columns):
        arrays.append(arr if arr.type == field.type else arr.cast(field.type))
    return pa.RecordBatch.from_arrays(arrays, schema=target)


# -- writing ---------------------------------------------------------------------------------
@dataclass
class DorisCommitMessage(WriterCommitMessage):
    txns: list[tuple[str, int]]   # (label, transaction id) of each pre-committed stream load


def _csv_body(table: pa.Table) -> bytes:
    """CSV with `\\N` for NULL, strings quoted when needed (the load's `enclose` is `"`)."""
    columns = []
    for col in table.columns:
        text = pc.cast(col, pa.string()) if col.type != pa.string() else col
        columns.append(pc.fill_null(text, "\\N"))
    out = io.BytesIO()
    pacsv.write_csv(pa.Table.from_arrays(columns, names=table.column_names), out,
                    pacsv.WriteOptions(include_header=False, delimiter=",",
                                       quoting_style="needed"))
    return out.getvalue()


class DorisWriter(DataSourceArrowWriter):
    def __init__(self, options: dict, schema):
        self.options = options
        self.schema = schema
        self.label_prefix = options.get("doris.sink.label.prefix") or f"spark-doris-{uuid.uuid4().hex[:12]}"

    def _headers(self, columns: list[str]) -> dict:
        h = {"format": "csv", "column_separator": ",", "enclose": '"',
             "columns": ", ".join(_quote(c) for c in columns), "two_phase_commit": "true",
             "Expect": "100-continue"}
        for k, v in self.options.items():
            if k.startswith("sink.properties."):
                h[k[len("sink.properties."):]] = v
        return h

    def write(self, iterator: Iterator[pa.RecordBatch]) -> DorisCommitMessage:
        from pyspark import TaskContext
        ctx = TaskContext.get()
        partition = ctx.partitionId() if ctx is not None else 0
        db, table = _identifier(self.options)
        conn = _Conn.of(self.options)
        size = int(self.options.get("doris.sink.batch.size") or DEFAULT_SINK_BATCH_SIZE)
        txns: list[tuple[str, int]] = []
        pending: list[pa.RecordBatch] = []
        rows = 0
        n = 0
        try:
            for batch in iterator:
                pending.append(batch)
                rows += batch.num_rows
                if rows >= size:
                    txns += self._load(conn, db, table, pending, f"{self.label_prefix}_{partition}_{n}")
                    pending, rows, n = [], 0, n + 1
            if pending:
                txns += self._load(conn, db, table, pending, f"{self.label_prefix}_{partition}_{n}")
        except BaseException:
            for label, _ in txns:  # this attempt's pre-committed loads go away
                _two_phase(conn, db, "abort", label=label, missing_ok=True)
            raise
        return DorisCommitMessage(txns)

    def _load(self, conn: _Conn, db: str, table: str, batches: list[pa.RecordBatch],
              label: str) -> list[tuple[str, int]]:
        data = pa.Table.from_batches(batches)
        body = _csv_body(data)
        headers = {**self._headers(data.column_names), "label": label}
        for _ in range(2):
            reply = _put(conn, db, table, body, headers)
            status = reply.get("Status")
            if status == "Success":
                return [(label, int(reply["TxnId"]))]
            if status == "Label Already Exists":
                if reply.get("ExistingJobStatus") == "FINISHED":
                    return []  # an earlier run of this job committed it
                _two_phase(conn, db, "abort", label=label, missing_ok=True)  # a dead attempt's
                continue
            raise DorisError(f"stream load {label} failed: {reply.get('Message')} "
                             f"{reply.get('ErrorURL', '')}".strip())
        raise DorisError(f"stream load {label}: the label stays in use")

    def commit(self, messages) -> None:
        conn = _Conn.of(self.options)
        db, _ = _identifier(self.options)
        for m in messages:
            for label, txn_id in (m.txns if m is not None else []):
                _two_phase(conn, db, "commit", txn_id=txn_id)

    def abort(self, messages) -> None:
        conn = _Conn.of(self.options)
        db, _ = _identifier(self.options)
        for m in messages:
            for label, txn_id in (m.txns if m is not None else []):
                _two_phase(conn, db, "abort", txn_id=txn_id, missing_ok=True)


def _put(conn: _Conn, db: str, table: str, body: bytes, headers: dict) -> dict:
    with conn.request("PUT", f"/api/{db}/{table}/_stream_load", body, headers) as resp:
        return json.loads(resp.read())


def _two_phase(conn: _Conn, db: str, operation: str, txn_id: int | None = None,
               label: str | None = None, missing_ok: bool = False) -> dict:
    headers = {"txn_operation": operation}
    if txn_id is not None:
        headers["txn_id"] = str(txn_id)
    if label is not None:
        headers["label"] = label
    try:
        with conn.request("PUT", f"/api/{db}/_stream_load_2pc", b"", headers) as resp:
            reply = json.loads(resp.read())
    except DorisError:
        if missing_ok:
            return {}
        raise
    if reply.get("status") != "Success":
        msg = str(reply.get("msg", ""))
        if operation == "commit" and "already visible" in msg:
            return reply  # a retried commit: committed once
        if not missing_ok:
            raise DorisError(f"{operation} of transaction {txn_id or label}: {msg}")
    return reply
