"""HTTP glue of the connector's read path (server/http/query_plan.py): requests in, JSON or a
chunked Arrow IPC stream out, errors as Doris's JSON (`{"msg": ..., "code": 1, ...}`)."""

from __future__ import annotations

import json
import logging
from urllib.parse import unquote

import pyarrow as pa

from catalog.auth import AccessDenied
from catalog.errors import DorisError
from server.http.query_plan import query_plan, scan_tablets, table_schema

log = logging.getLogger("minidoris.http")


def _error(handler, e: Exception, code: int = 400) -> None:
    msg = e.client_message() if isinstance(e, DorisError) else str(e)
    handler._reply(code, {"msg": msg, "code": 1, "data": None, "count": 0, "status": code,
                          "exception": msg})


def get_schema(service, handler, path: str) -> None:
    _, _, db, table, _ = path.split("/", 4)
    try:
        handler._reply(200, table_schema(service.services.catalog, unquote(db), unquote(table)))
    except DorisError as e:
        _error(handler, e, 404)


def post(service, handler, path: str, body: bytes, access) -> None:
    try:
        request = json.loads(body or b"{}")
    except ValueError:
        return _error(handler, ValueError("the body is not JSON"))
    services = service.services
    try:
        if path == "/api/_tablet_scan":
            schema, batches = scan_tablets(services, request.get("opaqued_query_plan", ""),
                                           [int(t) for t in request.get("tablet_ids", [])],
                                           str(services.global_variables.get("time_zone")),
                                           access)
            first = next(batches, None)  # errors surface before the 200
            return _stream_arrow(handler, schema, first, batches,
                                 int(request.get("batch_size") or 4064))
        _, _, db, table, _ = path.split("/", 4)
        handler._reply(200, query_plan(services.catalog, unquote(db), unquote(table),
                                       request.get("sql", ""), access))
    except AccessDenied as e:
        handler._reply(401, {"status": "FAILED", "msg": e.client_message()})
    except DorisError as e:
        _error(handler, e)


def _stream_arrow(handler, schema: pa.Schema, first, rest, batch_size: int) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "application/vnd.apache.arrow.stream")
    handler.send_header("Transfer-Encoding", "chunked")
    handler.end_headers()
    out = _ChunkedWriter(handler.wfile)
    try:
        writer = pa.ipc.new_stream(out, schema)
        for table in ([first] if first is not None else []):
            writer.write_table(table.cast(schema), max_chunksize=batch_size)
        for table in rest:
            writer.write_table(table.cast(schema), max_chunksize=batch_size)
        writer.close()
    except (BrokenPipeError, ConnectionResetError):
        log.debug("tablet scan: the client went away")
        return
    except Exception:  # the stream is cut short: the client sees a truncated stream
        log.warning("tablet scan failed mid-stream", exc_info=True)
    out.finish()


class _ChunkedWriter:
    """A file-like object writing HTTP/1.1 chunks (what pyarrow's IPC writer writes into)."""

    def __init__(self, wfile):
        self.wfile = wfile
        self.closed = False

    def write(self, data) -> int:
        data = bytes(data)
        if data:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        return len(data)

    def flush(self) -> None:
        self.wfile.flush()

    def finish(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
