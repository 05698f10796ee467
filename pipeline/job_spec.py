"""What the server hands a Spark Load driver (`job.json`), checked against the catalog.

The spec carries the table as the journal stores it (`OlapTable.to_dict`: columns, keys,
partitions with their tablets, distribution, indexes), so executors route, bucket and write
with the catalog's and storage's own code and the same snapshot of partitions the server
publishes into, and its storage shape then (`catalog.load.storage_shape`: the publish is
refused if the table changed shape meanwhile, as any load's); the load's clauses (files,
format, separators, column list, SET, WHERE, partitions, strict mode, max_filter_ratio); where
to write; the resource's Spark settings.
"""

from __future__ import annotations

from datetime import datetime

import sqlglot

from catalog.errors import AnalysisError, CodedDdlError
from catalog.load import storage_shape
from catalog.load_statements import LoadStmt
from server.http.load_options import StreamLoadOptions


def build_spec(catalog, db: str, stmt: LoadStmt, job_id: int, txn_id: int,
               resource_props: dict[str, str], max_filter_ratio: float, output_dir: str,
               segment_options: dict, time_zone: str) -> dict:
    desc = stmt.data[0]
    with catalog.lock:
        table = catalog.get_table(db, desc.table)
        table_dict = table.to_dict()
        shape = storage_shape(table)
    for name in desc.partitions:
        if table.partition_by_name(name) is None:
            raise CodedDdlError(f"Partition does not exist in table: {name}", 1507)
    for name, sql in desc.set_exprs:
        if table.column(name) is None:
            raise AnalysisError(f"Unknown column '{name}' in '{table.name}'")
        _parse(sql, "SET")
    if desc.where:
        _parse(desc.where, "WHERE")
    if desc.columns and desc.format == "csv":
        derived = {n.lower() for n, _ in desc.set_exprs}
        if len({c.lower() for c in desc.columns} | derived) != len(desc.columns) + len(derived):
            raise AnalysisError("Duplicate column in the column list and SET")
    if desc.negative:
        raise AnalysisError("NEGATIVE loads are not supported")
    for f in desc.files:
        if not f.startswith(("file://", "/", "hdfs://", "s3a://")):
            raise AnalysisError(f"Invalid file path: {f}")
    # Stream Load's separator rules: hex (\x01) and escapes decoded, an empty one refused
    seps = StreamLoadOptions.from_headers({"column_separator": desc.column_separator,
                                           "line_delimiter": desc.line_delimiter})
    master = resource_props.get("spark.master", "local[*]")
    return {
        "job_id": job_id, "txn_id": txn_id, "label": stmt.label, "db": db,
        "table": table_dict, "shape": [list(shape[0]), list(shape[1]), shape[2]],
        "files": list(desc.files), "format": desc.format,
        "column_separator": seps.column_separator, "line_delimiter": seps.line_delimiter,
        "columns": list(desc.columns) if desc.columns else None,
        "set": [list(p) for p in desc.set_exprs], "where": desc.where,
        "partitions": list(desc.partitions), "max_filter_ratio": max_filter_ratio,
        "strict_mode": stmt.properties.get("strict_mode", "false").lower() == "true",
        "time_zone": stmt.properties.get("timezone", time_zone),
        "now": datetime.now().isoformat(), "master": master,
        "spark_conf": {k: v for k, v in resource_props.items() if k.startswith("spark.")},
        "output_dir": output_dir, "segment": dict(segment_options),
    }


def _parse(sql: str, clause: str) -> None:
    try:
        sqlglot.parse_one(sql, dialect="doris")
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError):
        raise AnalysisError(f"Syntax error in {clause}: {sql}") from None
