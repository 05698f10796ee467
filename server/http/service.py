"""The HTTP service on `http_port`: Stream Load, Doris's REST endpoints, /metrics, the web UI.

A Starlette app (routes.py) served by uvicorn on the server's own asyncio loop, beside the MySQL
port: uvicorn parses HTTP/1.1 (keep-alive, chunked bodies, `Expect: 100-continue`, sent when the
app first asks for the body) and hands bodies over in pieces, so a Stream Load reads its body
as it arrives (request_body.py), never whole. Blocking work runs on a thread per request
(asgi.in_thread). The port is bound when the service is built (a port in use raises OSError
there); `start` serves it and `stop` ends it with the server: no new connections, idle ones
closed, requests in flight given `_GRACE_SECONDS` to finish.

The service also owns what the endpoints share: the error logs of recent loads (ErrorURL),
pre-committed two-phase loads, the Stream Loads running now and those that ran (SHOW STREAM
LOAD), the web UI's logins.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading

import uvicorn

from server.http.error_log import ErrorLogStore
from server.http.routes import build_app
from server.http.running_loads import RunningLoads
from server.http.stream_load import BodyLimits
from server import metrics, webui
from server.webui import log_buffer

log = logging.getLogger("minidoris.http")

_GRACE_SECONDS = 5.0
_KEEP_ALIVE_SECONDS = 60  # an idle keep-alive connection is closed after this


class _EmbeddedServer(uvicorn.Server):
    """uvicorn inside a program that owns its signals: SIGTERM/SIGINT stop the whole server
    (server/main.py), which then stops this one."""

    @contextlib.contextmanager
    def capture_signals(self):
        yield


class HttpService:
    def __init__(self, services, host: str, port: int):
        self.services = services
        self._socket = _bind(host, port)
        self.port = self._socket.getsockname()[1]
        self.errors = ErrorLogStore(f"http://{host}:{self.port}")
        self.txns = services.prepared_txns  # two-phase stream loads
        self.loads = RunningLoads()  # Stream Loads running now (the web UI's progress page)
        self.stream_loads = services.stream_loads  # Stream Loads that ran (SHOW STREAM LOAD)
        self.logins = webui.Logins(services.catalog.auth)  # the web UI's login cookies
        self.metrics = metrics.registry_of(services, lambda: len(self.loads.snapshot()))
        self.stopped = threading.Event()  # ends body reads waiting on a client
        log_buffer.install()  # the web UI's Logs page: the log's tail, kept in memory
        cfg = services.config
        self.limits = BodyLimits(cfg.streaming_load_max_mb, cfg.streaming_load_json_max_mb)
        config = uvicorn.Config(build_app(self), lifespan="off", log_config=None,
                                access_log=False, server_header=False,
                                headers=[("Server", "minidoris")],
                                timeout_keep_alive=_KEEP_ALIVE_SECONDS,
                                timeout_graceful_shutdown=_GRACE_SECONDS,
                                http="httptools")
        self._server = _EmbeddedServer(config)
        self._task: asyncio.Task | None = None
        logging.getLogger("uvicorn.error").setLevel(logging.WARNING)  # its start/stop chatter

    def start(self) -> None:
        """Serve on the running loop."""
        self._task = asyncio.get_running_loop().create_task(
            self._server.serve(sockets=[self._socket]), name="http")
        log.info("http service on port %d (stream load: PUT /api/{db}/{table}/_stream_load)",
                 self.port)

    async def stop(self) -> None:
        self.stopped.set()
        self._server.should_exit = True
        if self._task is not None:
            await self._task
        self._socket.close()


def _bind(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock
