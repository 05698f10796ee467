"""Logs: the tail of the server log (log_buffer.py), for ADMIN accounts only (Doris's LogAction
is an admin page). `lines` (1..5000, default 200) is the only parameter: no file names.

    GET /Logs?lines=200
    GET /rest/v1/log?lines=200     {"lines": [...]}
"""

from __future__ import annotations

from server.webui import log_buffer, render
from server.webui.responses import Response, ok

DEFAULT_LINES = 200


def _tail(ctx) -> tuple[int, list[str]]:
    ctx.caller.access.require_global("ADMIN")
    text = ctx.arg("lines", str(DEFAULT_LINES))
    lines = int(text) if text.isdigit() else DEFAULT_LINES
    lines = max(1, min(lines, log_buffer.CAPACITY))
    return lines, log_buffer.install().tail(lines)


def page(ctx, *_):
    lines, tail = _tail(ctx)
    return Response(200, render.page("logs.html", ctx.caller, active="Logs", lines=lines,
                                     tail="\n".join(tail)))


def api(ctx, *_):
    _, tail = _tail(ctx)
    return ok({"lines": tail}, len(tail))


ROUTES = {("GET", "/Logs"): page, ("GET", "/rest/v1/log"): api}
