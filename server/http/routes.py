"""The HTTP port's routes (a Starlette app) and its small endpoints.

Every endpoint but the health check and the error log needs HTTP Basic auth of an account of
the catalog (server/auth.py:login_basic), as Doris does; the web UI also takes its login cookie.

    /api/{db}/{table}/_stream_load, /api/{db}/_stream_load_2pc, /api/_load_error_log
                                          -> load_endpoints.py
    /api/{db}/{table}/_schema, _query_plan, /api/_tablet_scan -> read_api.py (Spark connector)
    GET  /api/health                      -> backends alive / total
    GET  /metrics                         -> Prometheus text (server/metrics.py), any account
    /api/compaction/show | run | run_status  -> the BE compaction API (ADMIN_PRIV)
    /api/bootstrap, /api/show_proc, /rest/v1/config/fe, /api/meta/..., /api/query/...
                                          -> Doris FE's REST endpoints (rest_api.py)
    anything else                         -> the web UI (server/webui/) when it owns the path
                                             or a browser asks (its 404 page); else Doris's
                                             JSON 404
"""

from __future__ import annotations

import logging

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from server import metrics, webui
from server.http import compaction_api, load_endpoints, read_api, rest_api
from server.http.asgi import (UnsentBodyClose, authorize, doris_json, in_thread, not_found,
                              read_body)

log = logging.getLogger("minidoris.http")

_WEBUI_MAX_BODY = 1 << 20
_WEBUI_HEADERS = {"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY",
                  "Content-Security-Policy": "default-src 'self'; img-src 'self' data:"}
_ANY = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]


async def health(request: Request) -> Response:
    backends = list(request.app.state.http.services.catalog.backends.values())
    alive = sum(1 for b in backends if getattr(b, "alive", True))
    return doris_json(200, {"msg": "success", "code": 0, "count": 0, "data": {
        "online_backend_num": alive, "total_backend_num": len(backends)}})


async def metrics_text(request: Request) -> Response:
    access = authorize(request)
    if isinstance(access, Response):
        return access
    text = await in_thread(metrics.render, request.app.state.http.metrics)
    return Response(text, 200, media_type=metrics.CONTENT_TYPE)


async def compaction(request: Request) -> Response:
    """The BE compaction endpoints; they need ADMIN_PRIV (Doris's BE checks them so with
    enable_all_http_auth)."""
    access = authorize(request, priv="ADMIN")
    if isinstance(access, Response):
        return access
    if request.method != "GET":
        body = await read_body(request)  # nothing is expected: read what there is
        if isinstance(body, Response):
            return body
    reply = await in_thread(compaction_api.handle, request.app.state.http.services,
                            request.method, request.url.path, request.url.query)
    return doris_json(*reply)


async def rest(request: Request) -> Response:
    """Doris FE's REST endpoints (rest_api.py), as the authenticated account."""
    path = request.url.path
    access = authorize(request, priv="ADMIN" if rest_api.needs_admin(path) else "")
    if isinstance(access, Response):
        return access
    body = None
    if request.method == "POST":
        body = await read_body(request)
        if isinstance(body, Response):
            return body
    try:
        reply = await in_thread(rest_api.handle, request.app.state.http.services, access,
                                request.method, path, request.url.query, body)
    except Exception as e:  # noqa: BLE001 - the request boundary: a bug, logged
        log.exception("%s %s failed", request.method, path)
        reply = (500, {"msg": f"{type(e).__name__}: {e}", "code": 1, "data": None, "count": 0})
    return doris_json(*reply)


async def fallback(request: Request) -> Response:
    """The web UI's paths (and a browser's unknown one: its 404 page), else Doris's 404."""
    path, method = request.url.path, request.method
    if method in ("GET", "POST") and webui.owns(path):
        return await _webui(request)
    if method in ("GET", "POST") and rest_api.owns(method, path):
        return await rest(request)
    if method == "GET" and "text/html" in request.headers.get("Accept", ""):
        return await _webui(request)
    return not_found(path)


async def _webui(request: Request) -> Response:
    """A page or JSON endpoint of the web UI (server/webui/); bodies up to 1 MB."""
    body = b""
    if request.method == "POST":
        body = await read_body(request, _WEBUI_MAX_BODY)
        if isinstance(body, Response):
            return body
    service = request.app.state.http
    url = request.url
    reply = await in_thread(webui.handle, service.services, service, service.logins,
                            request.method, url.path, url.query, request.headers, body,
                            request.client.host if request.client else "")
    return Response(reply.body, reply.status, {**_WEBUI_HEADERS, **reply.headers}, reply.ctype)


async def _internal_error(request: Request, exc: Exception) -> Response:
    """A bug in an endpoint: logged, and a JSON error instead of a traceback."""
    log.error("%s %s failed: %s: %s", request.method, request.url.path, type(exc).__name__, exc)
    return doris_json(500, {"msg": f"internal error ({type(exc).__name__}); the server log "
                                   f"has the details", "code": 1, "data": None, "count": 0})


ROUTES = [
    Route("/api/{db}/{table}/_stream_load", load_endpoints.stream_load, methods=["PUT", "POST"]),
    Route("/api/{db}/_stream_load_2pc", load_endpoints.two_phase, methods=["PUT", "POST"]),
    Route("/api/_load_error_log", load_endpoints.error_log, methods=["GET"]),
    Route("/api/_tablet_scan", read_api.post, methods=["POST"]),
    Route("/api/{db}/{table}/_query_plan", read_api.post, methods=["POST"]),
    Route("/api/{db}/{table}/_schema", read_api.get_schema, methods=["GET"]),
    Route("/api/health", health, methods=["GET"]),
    Route("/metrics", metrics_text, methods=["GET"]),
    *(Route(path, compaction, methods=_ANY) for path in compaction_api.PATHS),
    Route("/{path:path}", fallback, methods=_ANY),
]


def build_app(service) -> object:
    """The ASGI app of `service` (server/http/service.HttpService, in `app.state.http`)."""
    app = Starlette(routes=ROUTES, exception_handlers={500: _internal_error})
    app.state.http = service
    return UnsentBodyClose(app)
