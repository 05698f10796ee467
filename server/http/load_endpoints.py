"""The load endpoints of the HTTP port: Stream Load, its two-phase commit, and the rejected rows
of a recent load.

    PUT  /api/{db}/{table}/_stream_load   -> JSON reply of the load (two_phase_commit: true
                                             pre-commits it); POST is taken too
    PUT  /api/{db}/_stream_load_2pc       -> commit / abort a pre-committed load (two_phase.py)
    GET  /api/_load_error_log?file=...    -> the rejected rows of a recent load

A Stream Load needs LOAD_PRIV on its table. Its body is read as it arrives, from the load's
thread (request_body.py); a body over `streaming_load_max_mb` is refused before anything is
read (no `100 Continue`, and asgi.UnsentBodyClose closes the connection). What a failed load
leaves unread is dropped by the server as it arrives, or the connection closes when more than
DRAIN_MAX bytes may be left.
"""

from __future__ import annotations

import logging

from starlette.requests import Request
from starlette.responses import Response

from catalog.errors import DorisError, StorageIOError
from server.http.asgi import (DRAIN_MAX, authorize, client_ip, doris_json, in_thread,
                              read_body, request_body)
from server.http.running_loads import RunningLoad
from server.http.stream_load import run_stream_load

log = logging.getLogger("minidoris.http")


async def stream_load(request: Request) -> Response:
    service = request.app.state.http
    db, table = request.path_params["db"], request.path_params["table"]
    access = authorize(request, db, table)
    if isinstance(access, Response):
        return access
    body = request_body(request, service.stopped)
    if isinstance(body, Response):
        return body
    headers = dict(request.headers)
    running = RunningLoad(db, table, access.name, body)
    reply = await in_thread(_run, service, db, table, headers, body, running)
    service.services.metrics.record_load(reply.get("NumberLoadedRows", 0), body.received)
    service.stream_loads.record(reply, db, table, access.name, client_ip(request),
                                headers.get("comment", ""))
    extra = {"Connection": "close"} if body.started and body.unread_beyond(DRAIN_MAX) else None
    return doris_json(200, reply, extra)


def _run(service, db: str, table: str, headers: dict, body, running: RunningLoad) -> dict:
    services = service.services
    time_zone = str(services.global_variables.get("time_zone"))
    try:
        with service.loads.running(running):
            return run_stream_load(services.catalog, service.errors, db, table, headers, body,
                                   time_zone, service.txns, services.group_commit,
                                   service.limits, running.reply)
    except Exception as e:  # noqa: BLE001 - the request boundary: a Fail reply, logged
        failed = StorageIOError.of(e)  # a full or read-only disk: not a bug
        if failed is None:
            log.exception("stream load into %s.%s failed", db, table)
        else:
            log.warning("stream load into %s.%s failed: %s", db, table, failed.message)
        return {"Status": "Fail", "Label": headers.get("label", ""),
                "Message": failed.client_message() if failed else
                f"errCode = 2, detailMessage = {type(e).__name__}: {e}",
                "NumberLoadedRows": 0}


async def two_phase(request: Request) -> Response:
    service = request.app.state.http
    db = request.path_params["db"]
    access = authorize(request, db)
    if isinstance(access, Response):
        return access
    body = await read_body(request)
    if isinstance(body, Response):
        return body
    h = request.headers
    txn = h.get("txn_id", "").strip()
    try:
        msg = await in_thread(service.txns.operate, db, h.get("txn_operation", "").strip().lower(),
                              int(txn) if txn.isdigit() else None, h.get("label"))
        return doris_json(200, {"status": "Success", "msg": msg})
    except DorisError as e:
        return doris_json(200, {"status": "Fail", "msg": e.client_message()})


async def error_log(request: Request) -> Response:
    service = request.app.state.http
    name = request.query_params.get("file", "")
    text = service.errors.get(name)
    if text is None and name.startswith("__spark_load_") and name[13:].isdigit():
        text = service.services.load_manager.error_log(int(name[13:]))
    if text is None:
        return doris_json(404, {"status": "NOT_FOUND", "msg": "error log not found"})
    return Response(text, 200, media_type="text/plain; charset=utf-8")
