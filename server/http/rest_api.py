"""Doris FE's REST endpoints on the HTTP port, each run as the authenticated account through a
session of its own (so privileges apply as on the MySQL port), with Doris's JSON envelope
`{"msg": "success", "code": 0, "data": ..., "count": 0}` (`code` 1 and the error text in
`msg` when a statement fails):

    GET  /api/bootstrap                                  journal id, ports, version
    GET  /api/show_proc?path=/dbs                        SHOW PROC's rows (ADMIN)
    GET  /rest/v1/config/fe                              the FE configs (ADMIN)
    GET  /api/meta/namespaces/default_cluster/databases[/{db}/tables[/{table}/schema]]
    POST /api/query/default_cluster/{db}  {"stmt": "..."}   SQL over HTTP: `result_set`
                                                         (data, meta) or `exec_status`
"""

from __future__ import annotations

import datetime as dt
import json
import re
import time
from decimal import Decimal
from urllib.parse import parse_qs, unquote

from server.results import OkResult, RowsResult

_META = re.compile(r"^/api/meta/namespaces/[^/]+/databases(?:/([^/]+)/tables(?:/([^/]+)/schema)?)?$")
_QUERY = re.compile(r"^/api/query/[^/]+/([^/]+)$")
_ADMIN_PATHS = ("/api/show_proc", "/rest/v1/config/fe")


def owns(method: str, path: str) -> bool:
    if method == "POST":
        return _QUERY.match(path) is not None
    return path in ("/api/bootstrap", *_ADMIN_PATHS) or _META.match(path) is not None


def needs_admin(path: str) -> bool:
    return path in _ADMIN_PATHS


def _ok(data, count: int = 0) -> tuple[int, dict]:
    return 200, {"msg": "success", "code": 0, "data": data, "count": count}


def _failed(message: str) -> tuple[int, dict]:
    return 200, {"msg": message, "code": 1, "data": None, "count": 0}


def _session(services, access, db: str | None = None):
    from server.session import DorisSession  # session imports the handlers
    session = DorisSession(services)
    session.access, session.username = access, access.name
    session.database = db
    return session


def _run(session, sql: str):
    result = session.execute(sql)[-1]
    if isinstance(result, Exception):
        message = result.client_message() if hasattr(result, "client_message") else str(result)
        raise _StatementFailed(message)
    return result


class _StatementFailed(Exception):
    pass


def _json_value(v):
    if isinstance(v, (dt.date, dt.datetime, Decimal)):
        return str(v)
    if isinstance(v, bytes):
        return v.decode("utf-8", errors="replace")
    return v


def _rows(result: RowsResult) -> list[list]:
    out = []
    for batch in result.batches:
        columns = [c.to_pylist() for c in batch.columns]
        out += [[_json_value(v) for v in row] for row in zip(*columns)]
    return out


def handle(services, access, method: str, path: str, query: str,
           body: bytes | None) -> tuple[int, dict]:
    """(HTTP status, JSON reply) of one REST request by `access`'s account."""
    try:
        if path == "/api/bootstrap":
            cfg = services.config
            return _ok({"replayedJournalId": services.catalog.journal.seq,
                        "queryPort": cfg.query_port, "rpcPort": 9020,
                        "arrowFlightSqlPort": cfg.arrow_flight_sql_port,
                        "version": str(services.global_variables.get("version_comment"))})
        if path == "/api/show_proc":
            proc = parse_qs(query).get("path", ["/"])[0]
            result = _run(_session(services, access),
                          f"SHOW PROC '{proc.replace(chr(39), chr(39) * 2)}'")
            return _ok(_rows(result))
        if path == "/rest/v1/config/fe":
            result = _run(_session(services, access), "ADMIN SHOW FRONTEND CONFIG")
            return _ok({"column_names": [c.name for c in result.columns],
                        "rows": _rows(result)})
        meta = _META.match(path)
        if meta is not None:
            return _meta(services, access, *(unquote(g) if g else None for g in meta.groups()))
        statement = _QUERY.match(path)
        if statement is not None and method == "POST":
            return _query(services, access, unquote(statement.group(1)), body or b"")
    except _StatementFailed as e:
        return _failed(str(e))
    return 404, {"msg": f"no handler for {path}", "code": 404, "data": None, "count": 0}


def _meta(services, access, db: str | None, table: str | None) -> tuple[int, dict]:
    session = _session(services, access, db)
    if db is None:
        names = [r[0] for r in _rows(_run(session, "SHOW DATABASES"))]
        return _ok(names, len(names))
    if table is None:
        names = [r[0] for r in _rows(_run(session, f"SHOW TABLES FROM `{_q(db)}`"))]
        return _ok(names, len(names))
    result = _run(session, f"DESC `{_q(db)}`.`{_q(table)}`")
    names = [c.name for c in result.columns]
    schema = [dict(zip(names, row)) for row in _rows(result)]
    return _ok({table: {"schema": schema, "is_base": True}})


def _q(name: str) -> str:
    return name.replace("`", "``")


def _query(services, access, db: str, body: bytes) -> tuple[int, dict]:
    try:
        stmt = json.loads(body or b"{}").get("stmt")
    except (ValueError, AttributeError):
        stmt = None
    if not isinstance(stmt, str) or not stmt.strip():
        return _failed("the request body must be JSON with a \"stmt\" string")
    started = time.monotonic()
    result = _run(_session(services, access, db), stmt)
    elapsed = int((time.monotonic() - started) * 1000)
    if isinstance(result, OkResult):
        return _ok({"type": "exec_status", "status": {}, "time": elapsed})
    meta = [{"name": c.name, "type": c.type.sql().upper() if c.type is not None else "VARCHAR"}
            for c in result.columns]
    return _ok({"type": "result_set", "data": _rows(result), "meta": meta, "status": {},
                "time": elapsed})
