"""The Spark Doris Connector's read path: a table's schema, a scan plan, tablets read as Arrow.

    GET  /api/{db}/{table}/_schema        Doris's reply: {"properties": [{name, type, comment,
                                          aggregation_type}], "keysType", "status": 200}
    POST /api/{db}/{table}/_query_plan    body {"sql": "select k, v from db.t where ..."}: the
                                          planner binds it as a query (partition and bucket
                                          pruning from the WHERE), and the reply lists the
                                          surviving tablets with the version each is read at
                                          (the partitions' visible versions now: one snapshot)
                                          and an opaque plan (the SQL and those versions)
    POST /api/_tablet_scan                minidoris's stand-in for a BE's scanner (Doris serves
                                          it over Thrift on the BE port): body
                                          {"opaqued_query_plan", "tablet_ids", "batch_size"};
                                          the reply is an Arrow IPC stream of the rows of those
                                          tablets at the planned versions, filter applied,
                                          sent chunk by chunk as the executor produces them
Only a single-table SELECT of columns with an optional WHERE is a valid plan (the connector
sends nothing else). Scans run through the planner and executor like any query, with the
scan's tablets and versions replaced by the requested ones.
"""

from __future__ import annotations

import base64
import json
from datetime import datetime

import pyarrow as pa
import sqlglot
from sqlglot import exp

from catalog.access import CURRENT
from catalog.errors import AnalysisError
from executor.env import ExecEnv
from executor.expressions import EvalContext
from executor.stream import stream
from planner import logical as L
from planner.binder import BindContext, bind_statement
from planner.naming import NameGen


def table_schema(catalog, db: str, table_name: str) -> dict:
    with catalog.lock:
        table = catalog.get_table(db, table_name)
    props = []
    for c in table.columns:
        t = c.type
        entry = {"name": c.name, "type": t.kind, "comment": c.comment or "",
                 "aggregation_type": c.aggregation or ""}
        if t.kind == "DECIMAL":
            entry.update(precision=str(t.precision), scale=str(t.scale))
        props.append(entry)
    return {"keysType": table.keys_type, "properties": props, "status": 200}


def _parse(sql: str, db: str) -> exp.Select:
    try:
        stmt = sqlglot.parse_one(sql, dialect="doris")
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError) as e:
        raise AnalysisError(f"The sql is invalid: {str(e).splitlines()[0]}") from None
    if not isinstance(stmt, exp.Select) or stmt.args.get("joins") or stmt.args.get("group") \
            or stmt.args.get("having") or stmt.args.get("limit") or stmt.args.get("order") \
            or stmt.find(exp.AggFunc) is not None \
            or not isinstance(stmt.args.get("from_") or stmt.args.get("from"), exp.From):
        raise AnalysisError("only support single table select with columns and a filter")
    return stmt


def _find_scan(plan: object) -> L.OlapScan:
    if isinstance(plan, L.OlapScan):
        return plan
    for attr in ("input", "left", "right"):
        child = getattr(plan, attr, None)
        if child is not None:
            found = _find_scan(child)
            if found is not None:
                return found
    return None


def _bind(catalog, db: str, sql: str, access):
    stmt = _parse(sql, db)
    for t in stmt.find_all(exp.Table):  # the scanned table and any in a subquery of the WHERE
        access.require_tbl(t.db or db, t.name, "SELECT")
    token = CURRENT.set(access)  # the caller's row policies bind as in a query's thread
    try:
        plan, columns = bind_statement(stmt, BindContext(catalog, db, NameGen()))
    finally:
        CURRENT.reset(token)
    scan = _find_scan(plan)
    if scan is None:
        raise AnalysisError("only support single table select with columns and a filter")
    return plan, columns, scan


def query_plan(catalog, db: str, table_name: str, sql: str, access) -> dict:
    with catalog.lock:
        table = catalog.get_table(db, table_name)
        db = catalog.get_db(db).name
    _, _, scan = _bind(catalog, db, sql, access)
    if (scan.db, scan.table) != (db, table.name):
        raise AnalysisError(f"The sql reads table {scan.table}, not {table.name}")
    partitions = {}
    for t in scan.tablets:
        partitions[str(t.tablet_id)] = {"routings": [_routing(catalog, t.backend_id)],
                                        "version": t.version, "versionHash": 0, "schemaHash": 0}
    opaque = {"db": db, "sql": sql, "versions": {k: v["version"] for k, v in partitions.items()}}
    data = {"partitions": partitions, "status": 200,
            "opaqued_query_plan": base64.b64encode(json.dumps(opaque).encode()).decode()}
    return {"msg": "success", "code": 0, "data": data, "count": 0}


def _routing(catalog, backend_id: int) -> str:
    b = catalog.backends.get(backend_id)
    return f"{b.host}:{b.be_port}" if b is not None else "127.0.0.1:9060"


def scan_tablets(services, opaqued_plan: str, tablet_ids: list[int], time_zone: str, access):
    """(Arrow schema, tables) of the requested tablets' rows at the planned versions; the
    caller (`access`) needs SELECT_PRIV on the tables the plan reads (the opaque plan is the
    client's to forge)."""
    try:
        opaque = json.loads(base64.b64decode(opaqued_plan))
        versions = {int(k): int(v) for k, v in opaque["versions"].items()}
    except (ValueError, KeyError, TypeError):
        raise AnalysisError("invalid opaqued_query_plan") from None
    plan, columns, scan = _bind(services.catalog, opaque["db"], opaque["sql"], access)
    by_id = {t.tablet_id: t for t in scan.tablets}
    wanted = []
    for tid in tablet_ids:
        if tid not in versions:
            raise AnalysisError(f"tablet {tid} is not in the query plan")
        t = by_id.get(tid)
        if t is None:
            raise AnalysisError(f"tablet {tid} no longer exists")
        wanted.append(L.ScanTablet(tid, versions[tid], t.partition_id, t.backend_id, t.bucket))
    scan.tablets = wanted
    env = ExecEnv(services.engine, EvalContext(now=datetime.now(), time_zone=time_zone),
                  services.pool)
    names = [c.name for c in columns]
    schema = pa.schema([pa.field(c.name, c.type.arrow()) for c in columns])

    def batches():
        for b in stream(plan, env):
            yield pa.Table.from_arrays([b.column(c.internal) for c in columns], names=names)
    return schema, batches()
