"""HTTP glue of the connector's read path (server/http/query_plan.py): requests in, JSON or a
chunked Arrow IPC stream out, errors as Doris's JSON (`{"msg": ..., "code": 1, ...}`).

    GET  /api/{db}/{table}/_schema        the table's schema (SELECT_PRIV)
    POST /api/{db}/{table}/_query_plan    the plan of a `sql` on the table (SELECT_PRIV)
    POST /api/_tablet_scan                the rows of some tablets of a plan, as Arrow IPC
"""

from __future__ import annotations

import json
import logging

import pyarrow as pa
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from catalog.auth import AccessDenied
from catalog.errors import DorisError
from server.http.asgi import authorize, doris_json, in_thread, read_body
from server.http.query_plan import query_plan, scan_tablets, table_schema

log = logging.getLogger("minidoris.http")


def _error(e: Exception, code: int = 400) -> Response:
    msg = e.client_message() if isinstance(e, DorisError) else str(e)
    return doris_json(code, {"msg": msg, "code": 1, "data": None, "count": 0, "status": code,
                             "exception": msg})


async def get_schema(request: Request) -> Response:
    db, table = request.path_params["db"], request.path_params["table"]
    access = authorize(request, db, table, "SELECT")
    if isinstance(access, Response):
        return access
    try:
        return doris_json(200, await in_thread(table_schema, request.app.state.http.services
                                               .catalog, db, table))
    except DorisError as e:
        return _error(e, 404)


async def post(request: Request) -> Response:
    """_query_plan (path parameters db, table) or _tablet_scan (none)."""
    db, table = request.path_params.get("db"), request.path_params.get("table")
    access = authorize(request, db, table, "SELECT")
    if isinstance(access, Response):
        return access
    body = await read_body(request)
    if isinstance(body, Response):
        return body
    try:
        parsed = json.loads(body or b"{}")
    except ValueError:
        return _error(ValueError("the body is not JSON"))
    try:
        return await in_thread(_post, request.app.state.http.services, db, table, parsed,
                               access)
    except AccessDenied as e:
        return doris_json(401, {"status": "FAILED", "msg": e.client_message()})
    except DorisError as e:
        return _error(e)


def _post(services, db: str | None, table: str | None, request: dict, access) -> Response:
    if table is None:
        schema, batches = scan_tablets(services, request.get("opaqued_query_plan", ""),
                                       [int(t) for t in request.get("tablet_ids", [])],
                                       str(services.global_variables.get("time_zone")), access)
        first = next(batches, None)  # errors surface before the 200
        return StreamingResponse(_arrow_stream(schema, first, batches,
                                               int(request.get("batch_size") or 4064)),
                                 media_type="application/vnd.apache.arrow.stream")
    return doris_json(200, query_plan(services.catalog, db, table, request.get("sql", ""),
                                      access))


def _arrow_stream(schema: pa.Schema, first, rest, batch_size: int):
    """The IPC stream's bytes, a piece per table written (the server sends them chunked). A
    failure mid-stream ends it short: the client sees a truncated stream."""
    out = _Pieces()
    writer = pa.ipc.new_stream(out, schema)
    try:
        for table in ([first] if first is not None else []):
            writer.write_table(table.cast(schema), max_chunksize=batch_size)
            yield out.take()
        for table in rest:
            writer.write_table(table.cast(schema), max_chunksize=batch_size)
            yield out.take()
        writer.close()
    except Exception:  # noqa: BLE001 - mid-stream: nothing left to do but end it, logged
        log.warning("tablet scan failed mid-stream", exc_info=True)
    yield out.take()


class _Pieces:
    """A file-like sink for pyarrow's IPC writer whose bytes are taken piece by piece."""

    closed = False

    def __init__(self) -> None:
        self._parts: list[bytes] = []

    def write(self, data) -> int:
        self._parts.append(bytes(data))
        return len(data)

    def flush(self) -> None:
        pass

    def take(self) -> bytes:
        data, self._parts = b"".join(self._parts), []
        return data
