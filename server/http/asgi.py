"""What every endpoint of the HTTP port shares: Doris's JSON replies, HTTP Basic auth against
the catalog's accounts, the request body as a `RequestBody`, blocking work on a thread, and the
middleware that closes a connection whose body was left unsent.

Blocking work (a load, a statement, a catalog walk) runs on a daemon thread of its own per
request (`in_thread`), as the previous threaded server did: a long load never holds the event
loop, which also carries the MySQL port, and never keeps the process from exiting.
"""

from __future__ import annotations

import asyncio
import json
import threading

from starlette.requests import Request
from starlette.responses import Response

from catalog.auth import AccessDenied
from server.auth import login_basic
from server.http.request_body import RequestBody

MAX_BODY = 64 << 20  # a body read whole (JSON requests); Stream Load: stream_load.BodyLimits
DRAIN_MAX = 64 << 20  # unread body bytes the server drops after a reply; beyond, it closes
AUTHENTICATE = {"WWW-Authenticate": 'Basic realm="minidoris"'}


def doris_json(status: int, payload: dict, headers: dict | None = None) -> Response:
    """Doris's JSON reply (indented, as the BE writes a Stream Load's)."""
    return Response(json.dumps(payload, indent=4), status, headers, "application/json")


def not_found(path: str) -> Response:
    return doris_json(404, {"status": "NOT_FOUND", "msg": f"no handler for {path}"})


def client_ip(request: Request) -> str:
    return request.client.host if request.client else ""


def authorize(request: Request, db: str | None = None, table: str | None = None,
              priv: str = "LOAD"):
    """Basic auth against the accounts, then `priv` on the table or database (with neither,
    a valid login is enough; priv ADMIN: the global privilege). The caller's Access, or the
    401 reply to send."""
    services = request.app.state.http.services
    try:
        access = login_basic(services.catalog.auth, request.headers.get("Authorization"),
                             client_ip(request))
        if table is not None:
            access.require_tbl(db, table, priv)
        elif db is not None:
            access.require_db(db, priv)
        elif priv == "ADMIN":
            access.require_global("ADMIN")
    except AccessDenied as e:
        return doris_json(401, {"status": "FAILED", "msg": e.client_message()}, AUTHENTICATE)
    return access


def request_body(request: Request,
                 stopped: threading.Event | None = None) -> RequestBody | Response:
    """The request's body as a stream, or the 400 reply to a bad Content-Length."""
    if "chunked" in request.headers.get("Transfer-Encoding", "").lower():
        length = None
    else:
        try:
            length = int(request.headers.get("Content-Length", "0"))
        except ValueError:
            length = -1
        if length < 0:
            return doris_json(400, {"status": "FAILED", "msg": "bad Content-Length"})
    return RequestBody(request.receive, asyncio.get_running_loop(), length, stopped=stopped)


async def read_body(request: Request, max_bytes: int = MAX_BODY) -> bytes | Response:
    """A small body, whole, or the reply refusing it (400 bad length, 413 too large)."""
    body = request_body(request)
    if isinstance(body, Response):
        return body
    if body.length is not None and body.length > max_bytes:
        return doris_json(413, {"status": "FAILED", "msg": "bad or too large body"})
    data = await body.read_all(max_bytes)
    if data is None:
        return doris_json(413, {"status": "FAILED", "msg": "too large body"})
    return data


async def in_thread(fn, *args):
    """`fn(*args)` on a daemon thread of its own; its result or exception, awaited."""
    loop = asyncio.get_running_loop()
    future = loop.create_future()

    def settle(result, error) -> None:
        if not future.cancelled():
            future.set_exception(error) if error is not None else future.set_result(result)

    def run() -> None:
        try:
            result, error = fn(*args), None
        except BaseException as e:  # noqa: BLE001 - handed to the awaiting request
            result, error = None, e
        try:
            loop.call_soon_threadsafe(settle, result, error)
        except RuntimeError:
            pass  # the loop has closed: the server is gone

    threading.Thread(target=run, name="http", daemon=True).start()
    return await future


class UnsentBodyClose:
    """ASGI middleware: a reply sent before a request's body was asked for, when the client
    announced `Expect: 100-continue`, closes the connection (`Connection: close`). The client
    never sends that body (no `100 Continue` went out), so the connection cannot carry another
    request: its next bytes would be read as the body."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or not _expects_continue(scope):
            return await self.app(scope, receive, send)
        asked = False

        async def tracked_receive():
            nonlocal asked
            asked = True
            return await receive()

        async def closing_send(message):
            if message["type"] == "http.response.start" and not asked:
                headers = [h for h in message.get("headers", []) if h[0].lower() != b"connection"]
                message = {**message, "headers": [*headers, (b"connection", b"close")]}
            await send(message)

        await self.app(scope, tracked_receive, closing_send)


def _expects_continue(scope) -> bool:
    headers = dict(scope.get("headers", []))
    has_body = headers.get(b"content-length", b"0") not in (b"0", b"") or \
        b"chunked" in headers.get(b"transfer-encoding", b"").lower()
    return has_body and headers.get(b"expect", b"").lower() == b"100-continue"
