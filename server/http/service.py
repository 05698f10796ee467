"""The HTTP service on `http_port`: Stream Load and Doris's small REST endpoints.

A `ThreadingHTTPServer` in a daemon thread (one thread per request; loads run their Arrow work
with the GIL released). HTTP/1.1 with `Expect: 100-continue` (curl sends it before large
bodies) and chunked request bodies (`curl -T -`). A Stream Load reads its body as it arrives
(request_body.py), never whole. Every endpoint but the health check needs
HTTP Basic auth of an account of the catalog (server/auth.py:login_basic), as Doris does; a
Stream Load also needs LOAD_PRIV on its table.

    PUT  /api/{db}/{table}/_stream_load   -> JSON reply of the load (two_phase_commit: true
                                             pre-commits it)
    PUT  /api/{db}/_stream_load_2pc       -> commit / abort a pre-committed load (two_phase.py)
    GET  /api/{db}/{table}/_schema        -> the Spark connector's read path (query_plan.py)
    POST /api/{db}/{table}/_query_plan, POST /api/_tablet_scan
    GET  /api/_load_error_log?file=...    -> the rejected rows of a recent load
    GET  /api/health                      -> backends alive / total
    /api/compaction/show | run | run_status  -> the BE compaction API (compaction_api.py)
    /login, /Playground, /System, /QueryProfile, ... and their JSON (/rest/v1/system, ...)
                                          -> the web UI (server/webui/), login form or Basic
                                             auth; a browser's unknown path gets its 404 page
"""

from __future__ import annotations

import json
import logging
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

from catalog.auth import AccessDenied
from catalog.errors import DorisError, StorageIOError
from server import metrics
from server.auth import login_basic
from server.http import compaction_api, read_api, rest_api
from server.http.error_log import ErrorLogStore
from server.http.load_options import StreamLoadOptions
from server.http.request_body import RequestBody
from server.http.running_loads import RunningLoad, RunningLoads
from server.http.stream_load import BodyLimits, body_limit, run_stream_load
from server.http.two_phase import PreparedTxns
from server import webui
from server.webui import log_buffer

log = logging.getLogger("minidoris.http")

_STREAM_LOAD = re.compile(r"^/api/([^/]+)/([^/]+)/_stream_load$")
_TWO_PHASE = re.compile(r"^/api/([^/]+)/_stream_load_2pc$")
_QUERY_PLAN = re.compile(r"^/api/([^/]+)/([^/]+)/_query_plan$")
_SCHEMA = re.compile(r"^/api/([^/]+)/([^/]+)/_schema$")
_MAX_BODY = 10 << 30  # other endpoints' bodies (read whole); Stream Load: BodyLimits
_WEBUI_MAX_BODY = 1 << 20
_WEBUI_HEADERS = {"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY",
                  "Content-Security-Policy": "default-src 'self'; img-src 'self' data:"}
_DRAIN_MAX = 64 << 20  # unread body bytes drained after a reply; beyond, the connection closes


class HttpService:
    def __init__(self, services, host: str, port: int):
        self.services = services
        self.server = ThreadingHTTPServer((host, port), _handler_class(self))
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.errors = ErrorLogStore(f"http://{host}:{self.port}")
        self.txns = PreparedTxns(services.catalog)  # two-phase stream loads
        self.loads = RunningLoads()  # Stream Loads running now (the web UI's progress page)
        self.logins = webui.Logins(services.catalog.auth)  # the web UI's login cookies
        log_buffer.install()  # the web UI's Logs page: the log's tail, kept in memory
        cfg = services.config
        self.limits = BodyLimits(cfg.streaming_load_max_mb, cfg.streaming_load_json_max_mb)
        self._thread = threading.Thread(target=self.server.serve_forever, name="http",
                                        daemon=True)

    def start(self) -> None:
        self._thread.start()
        log.info("http service on port %d (stream load: PUT /api/{db}/{table}/_stream_load)",
                 self.port)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _handler_class(service: HttpService) -> type:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "minidoris"

        def log_message(self, fmt: str, *args) -> None:  # access log at DEBUG, not stderr
            log.debug("%s - %s", self.address_string(), fmt % args)

        def do_POST(self) -> None:
            path = urlsplit(self.path).path
            if webui.owns(path):
                return self._webui()
            if self._rest("POST"):
                return
            plan = _QUERY_PLAN.match(path)
            if plan is not None or path == "/api/_tablet_scan":
                names = (unquote(plan.group(1)), unquote(plan.group(2))) if plan else (None, None)
                access = self._authorized(*names, priv="SELECT")
                if not access:
                    return
                body = self._body()
                if body is not None:
                    read_api.post(service, self, path, body, access)
                return
            self.do_PUT()

        def do_PUT(self) -> None:
            url = urlsplit(self.path)
            path = url.path
            if self._compaction(url):
                return
            m2 = _TWO_PHASE.match(path)
            if m2 is not None:
                return self._two_phase(unquote(m2.group(1)))
            m = _STREAM_LOAD.match(path)
            if m is None:
                return self._reply(404, {"status": "NOT_FOUND", "msg": f"no handler for {path}"})
            db, table = unquote(m.group(1)), unquote(m.group(2))
            if not self._authorized(db, table):
                return
            length = self._declared_length()
            if length == -1:
                return
            body = RequestBody(self.rfile, length)
            time_zone = str(service.services.global_variables.get("time_zone"))
            headers = {k: v for k, v in self.headers.items()}
            running = RunningLoad(db, table, self._user, body)
            try:
                with service.loads.running(running):
                    reply = run_stream_load(service.services.catalog, service.errors, db,
                                            table, headers, body, time_zone, service.txns,
                                            service.services.group_commit, service.limits,
                                            running.reply)
            except Exception as e:  # noqa: BLE001 - the request boundary: a Fail reply, logged
                failed = StorageIOError.of(e)  # a full or read-only disk: not a bug
                if failed is None:
                    log.exception("stream load into %s.%s failed", db, table)
                else:
                    log.warning("stream load into %s.%s failed: %s", db, table, failed.message)
                reply = {"Status": "Fail", "Label": headers.get("label", ""),
                         "Message": failed.client_message() if failed else
                         f"errCode = 2, detailMessage = {type(e).__name__}: {e}",
                         "NumberLoadedRows": 0}
            if getattr(self, "_refused_body", False) or not body.drain(_DRAIN_MAX):
                self.close_connection = True  # the rest of a refused or failed body
            self._reply(200, reply)

        def handle_expect_100(self) -> bool:
            """No `100 Continue` for a Stream Load body over its limit: the reply refuses it
            and the client never sends it (curl waits for the 100 before a large body)."""
            if _STREAM_LOAD.match(urlsplit(self.path).path):
                try:
                    length = int(self.headers.get("Content-Length", "-1"))
                    limit, _ = body_limit(StreamLoadOptions.from_headers(dict(self.headers)),
                                          service.limits)
                except (ValueError, DorisError):
                    length, limit = -1, 0
                if length > limit > 0:
                    self._refused_body = True  # never sent: nothing to drain
                    return True
            return super().handle_expect_100()

        def _declared_length(self) -> int | None:
            """The body's Content-Length, None for a chunked body, -1 (replied 400) if bad."""
            if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                return None
            try:
                length = int(self.headers.get("Content-Length", "0"))
            except ValueError:
                length = -1
            if length < 0:
                self._reply(400, {"status": "FAILED", "msg": "bad Content-Length"})
                return -1
            return length

        def do_GET(self) -> None:
            url = urlsplit(self.path)
            if self._compaction(url):
                return
            if url.path == "/api/health":
                backends = list(service.services.catalog.backends.values())
                alive = sum(1 for b in backends if getattr(b, "alive", True))
                return self._reply(200, {"msg": "success", "code": 0, "count": 0, "data": {
                    "online_backend_num": alive, "total_backend_num": len(backends)}})
            if webui.owns(url.path):
                return self._webui()
            if self._rest("GET"):
                return
            if url.path == "/metrics":  # Prometheus (server/metrics.py); any valid account
                if self._authorized() is False:
                    return
                return self._send(200, metrics.render(service.services).encode(),
                                  "text/plain; version=0.0.4; charset=utf-8")
            if url.path == "/api/_load_error_log":
                name = parse_qs(url.query).get("file", [""])[0]
                text = service.errors.get(name)
                if text is None and name.startswith("__spark_load_") and name[13:].isdigit():
                    text = service.services.load_manager.error_log(int(name[13:]))
                if text is None:
                    return self._reply(404, {"status": "NOT_FOUND", "msg": "error log not found"})
                return self._send(200, text.encode(), "text/plain; charset=utf-8")
            schema = _SCHEMA.match(url.path)
            if schema is not None:
                if self._authorized(unquote(schema.group(1)), unquote(schema.group(2)), "SELECT"):
                    read_api.get_schema(service, self, url.path)
                return
            if "text/html" in self.headers.get("Accept", ""):
                return self._webui()  # a browser: the web UI's 404 page
            self._reply(404, {"status": "NOT_FOUND", "msg": f"no handler for {url.path}"})

        def _webui(self) -> None:
            """A page or JSON endpoint of the web UI (server/webui/); bodies up to 1 MB."""
            body = b""
            if self.command == "POST" and \
                    "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                body = self._body()
                if body is None:
                    return
                if len(body) > _WEBUI_MAX_BODY:
                    return self._reply(413, {"status": "FAILED", "msg": "too large body"})
            elif self.command == "POST":
                try:
                    length = int(self.headers.get("Content-Length", "0"))
                except ValueError:
                    length = -1
                if not 0 <= length <= _WEBUI_MAX_BODY:
                    self._discard_body()
                    return self._reply(413, {"status": "FAILED", "msg": "bad or too large body"})
                body = self.rfile.read(length)
            url = urlsplit(self.path)
            response = webui.handle(service.services, service, service.logins, self.command,
                                    url.path, url.query, self.headers, body,
                                    self.client_address[0])
            self._send(response.status, response.body, response.ctype,
                       {**_WEBUI_HEADERS, **response.headers})

        def _rest(self, method: str) -> bool:
            """Doris FE's REST endpoints (rest_api.py), as the authenticated account."""
            url = urlsplit(self.path)
            if not rest_api.owns(method, url.path):
                return False
            access = self._authorized(priv="ADMIN" if rest_api.needs_admin(url.path) else "")
            if not access:
                return True
            body = self._body() if method == "POST" else None
            if method == "POST" and body is None:
                return True
            try:
                reply = rest_api.handle(service.services, access, method, url.path, url.query,
                                        body)
            except Exception as e:  # noqa: BLE001 - the request boundary: a bug, logged
                log.exception("%s %s failed", method, url.path)
                reply = (500, {"msg": f"{type(e).__name__}: {e}", "code": 1, "data": None,
                               "count": 0})
            self._reply(*reply)
            return True

        def _compaction(self, url) -> bool:
            """The BE compaction endpoints; they need an account with ADMIN_PRIV (Doris's BE
            checks them so with enable_all_http_auth)."""
            if not compaction_api.owns(url.path):
                return False
            if not self._authorized(priv="ADMIN"):
                return True
            reply = compaction_api.handle(service.services, self.command, url.path, url.query)
            if self.command != "GET":
                self._body()  # drain a body, if any
            self._reply(*reply)
            return True

        def _two_phase(self, db: str) -> None:
            if not self._authorized(db):
                return
            if self._body() is None:
                return
            h = {k.lower(): v for k, v in self.headers.items()}
            txn = h.get("txn_id", "").strip()
            try:
                msg = service.txns.operate(db, h.get("txn_operation", "").strip().lower(),
                                           int(txn) if txn.isdigit() else None, h.get("label"))
                self._reply(200, {"status": "Success", "msg": msg})
            except DorisError as e:
                self._reply(200, {"status": "Fail", "msg": e.client_message()})

        def _authorized(self, db: str | None = None, table: str | None = None,
                        priv: str = "LOAD"):
            """Basic auth against the accounts, then `priv` on the table or database (401
            otherwise: False); with neither, a valid login is enough. The caller's Access."""
            try:
                access = login_basic(service.services.catalog.auth,
                                     self.headers.get("Authorization"), self.client_address[0])
                self._user = access.name
                if table is not None:
                    access.require_tbl(db, table, priv)
                elif db is not None:
                    access.require_db(db, priv)
                elif priv == "ADMIN":
                    access.require_global("ADMIN")
            except AccessDenied as e:
                self._discard_body()
                self._reply(401, {"status": "FAILED", "msg": e.client_message()},
                            {"WWW-Authenticate": 'Basic realm="minidoris"'})
                return False
            return access

        def _discard_body(self) -> None:
            """A request refused before its body was read: read and drop the body (up to
            _DRAIN_MAX), so a client still sending it gets the reply, not a broken pipe."""
            if getattr(self, "_refused_body", False):
                return  # `Expect: 100-continue` refused: the client never sends it
            chunked = "chunked" in self.headers.get("Transfer-Encoding", "").lower()
            try:
                length = None if chunked else int(self.headers.get("Content-Length", "0"))
            except ValueError:
                length = -1
            if length == 0:
                return
            if length is None or length > 0:
                if RequestBody(self.rfile, length).drain(_DRAIN_MAX):
                    return
            self.close_connection = True

        def _body(self) -> bytes | None:
            if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                parts, size = [], 0
                while True:
                    line = self.rfile.readline(1024)
                    try:
                        n = int(line.split(b";")[0].strip() or b"0", 16)
                    except ValueError:
                        self._reply(400, {"status": "FAILED", "msg": "malformed chunked body"})
                        return None
                    if n == 0:
                        while self.rfile.readline(1024).strip():
                            pass  # trailers
                        return b"".join(parts)
                    size += n
                    if size > _MAX_BODY:
                        self._reply(413, {"status": "FAILED", "msg": "body exceeds streaming_load_max_mb"})
                        return None
                    parts.append(self.rfile.read(n))
                    self.rfile.readline(8)
            try:
                length = int(self.headers.get("Content-Length", "0"))
            except ValueError:
                length = -1
            if length < 0 or length > _MAX_BODY:
                self._reply(400 if length < 0 else 413,
                            {"status": "FAILED", "msg": "bad or too large Content-Length"})
                return None
            return self.rfile.read(length)

        def _reply(self, code: int, payload: dict, extra: dict | None = None) -> None:
            self._send(code, json.dumps(payload, indent=4).encode(), "application/json", extra)

        def _send(self, code: int, data: bytes, ctype: str, extra: dict | None = None) -> None:
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            for k, v in (extra or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

    return Handler
