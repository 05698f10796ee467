"""The web UI's request handling: route a request to its page, check who is asking, turn every
failure into a clear page or JSON error (never a traceback).

server/http/routes.py (its catch-all route) hands over every path `owns` claims (and unknown
paths a browser asks for, for the 404 page). A route is `(method, regex) -> handler(ctx,
*groups)`, each page module (server/webui/pages/) listing its own in `ROUTES`. A handler
returns a `Response`; HTML pages get `render.page`, JSON endpoints Doris's envelope `{"msg",
"code", "data", "count"}`. Everything but /login and /static/ needs an account: a browser
without one is sent to the login form, an API client gets 401.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from importlib import resources
from urllib.parse import parse_qs, quote

from catalog.auth import AccessDenied
from server.webui import render
from server.webui.logins import Caller, Logins, clear_cookie, set_cookie
from server.webui.pages import (config_page, logs, playground, profile_page, progress,
                                session_page, system, tables)
from server.webui.responses import NotFound, Response, error_page, failed, redirect
from server.webui.sql import StatementFailed

log = logging.getLogger("minidoris.webui")

_STATIC = {"/static/webui.css": "text/css; charset=utf-8",
           "/static/webui.js": "text/javascript; charset=utf-8"}
_PAGES = (playground, system, profile_page, session_page, config_page, logs, tables, progress)
_ROUTES = [(method, re.compile(f"^{pattern}$"), fn)
           for module in _PAGES for (method, pattern), fn in module.ROUTES.items()]


@dataclass
class Context:
    """One request, as the page handlers see it."""

    services: object
    http: object                     # server/http/service.HttpService (running loads)
    caller: Caller | None
    method: str
    path: str
    query: dict[str, str]
    body: bytes

    def arg(self, name: str, default: str = "") -> str:
        return self.query.get(name, default)

    def json_body(self) -> dict:
        try:
            value = json.loads(self.body or b"{}")
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}


def owns(path: str) -> bool:
    return path in ("/", "/login", "/logout") or path in _STATIC or \
        any(pattern.match(path) for _, pattern, _ in _ROUTES)


def _is_api(path: str) -> bool:
    return path.startswith(("/rest/", "/api/"))


def handle(services, http, logins: Logins, method: str, path: str, query: str,
           headers, body: bytes, remote_ip: str) -> Response:
    """The response to one request; never raises."""
    args = {k: v[0] for k, v in parse_qs(query, keep_blank_values=True).items()}
    caller = None
    try:
        if path in _STATIC and method == "GET":
            name = path.rsplit("/", 1)[1]
            data = resources.files("server.webui").joinpath("static", name).read_bytes()
            return Response(200, data, _STATIC[path], {"Cache-Control": "max-age=300"})
        if path == "/login":
            return _login(logins, method, args, body, remote_ip)
        try:
            caller = logins.caller(headers, remote_ip, method)
        except AccessDenied as e:
            return _refused(e, method, path, query, headers)
        if path == "/logout":
            if caller.login is not None:
                logins.logout(caller.login.token)
            return redirect("/login", {"Set-Cookie": clear_cookie()})
        if path == "/":
            return redirect("/Playground")
        ctx = Context(services, http, caller, method, path, args, body)
        for m, pattern, fn in _ROUTES:
            match = pattern.match(path)
            if match is not None and m == method:
                return fn(ctx, *match.groups())
        raise NotFound(f"no page {path}" if method == "GET" else f"{method} {path} is not allowed")
    except NotFound as e:
        return failed(str(e), 404, 404) if _is_api(path) else error_page(404, str(e), caller)
    except StatementFailed as e:
        return failed(str(e)) if _is_api(path) else error_page(400, str(e), caller)
    except AccessDenied as e:
        return failed(e.client_message(), 403, 403) if _is_api(path) else \
            error_page(403, e.client_message(), caller)
    except Exception as e:  # noqa: BLE001 - the request boundary: a bug, logged, never shown raw
        log.exception("web UI %s %s failed", method, path)
        message = f"internal error ({type(e).__name__}); the server log has the details"
        return failed(message, 500, 500) if _is_api(path) else error_page(500, message, caller)


def _refused(e: AccessDenied, method: str, path: str, query: str, headers) -> Response:
    """No valid account: 401 for an API client or a wrong Basic password, else a browser is
    sent to the login form (and back here after it)."""
    if _is_api(path):
        return failed(e.client_message(), 401, 401)
    if method != "GET" or headers.get("Authorization"):
        return Response(401, render.page("login.html", None, error=e.client_message(),
                                         username="", next="/Playground"),
                        headers={"WWW-Authenticate": 'Basic realm="minidoris"'})
    return redirect("/login?next=" + quote(path + ("?" + query if query else "")))


def _login(logins: Logins, method: str, args: dict, body: bytes, remote_ip: str) -> Response:
    target = args.get("next", "/Playground")
    if method == "POST":
        form = {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace"),
                                             keep_blank_values=True).items()}
        target = form.get("next", target)
        name = form.get("username", "")
        try:
            login = logins.login(name, form.get("password", ""), remote_ip)
        except AccessDenied as e:
            return Response(401, render.page("login.html", None, error=e.client_message(),
                                             username=name, next=target))
        return redirect(_local(target), {"Set-Cookie": set_cookie(login)})
    return Response(200, render.page("login.html", None, error="", username="",
                                     next=_local(target)))


def _local(target: str) -> str:
    """Only a path of this server after login (never another site)."""
    return target if target.startswith("/") and not target.startswith(("//", "/\\")) \
        else "/Playground"
