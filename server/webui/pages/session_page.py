"""Session: the connections, as SHOW FULL PROCESSLIST shows them to the caller (all of them
with ADMIN, else the caller's own), each with buttons that KILL its query or its connection.

    GET  /Session                  the page
    GET  /rest/v1/session          {"column_names", "rows"}
    POST /api/webui/kill  {"connection_id": n, "query": true|false}   KILL [QUERY] n as the
                                   caller (KILL's own checks and errors)
"""

from __future__ import annotations

from server.webui import render
from server.webui.responses import Response, failed, ok
from server.webui.sql import StatementFailed, run, table_of


def _processlist(ctx) -> tuple[list[str], list[list]]:
    return table_of(run(ctx.services, ctx.caller, "SHOW FULL PROCESSLIST"))


def page(ctx, *_):
    names, rows = _processlist(ctx)
    return Response(200, render.page("session.html", ctx.caller, active="Session",
                                     names=names, rows=rows, id_column=names.index("Id")))


def api(ctx, *_):
    names, rows = _processlist(ctx)
    return ok({"column_names": names, "rows": rows}, len(rows))


def kill(ctx, *_):
    body = ctx.json_body()
    target = body.get("connection_id")
    if not isinstance(target, int) or isinstance(target, bool):
        return failed("the request body must be JSON with a \"connection_id\" number")
    kind = "QUERY" if body.get("query", True) else "CONNECTION"
    try:
        run(ctx.services, ctx.caller, f"KILL {kind} {target}")
    except StatementFailed as e:
        return failed(str(e))
    return ok({"killed": target, "kind": kind})


ROUTES = {("GET", "/Session"): page, ("GET", "/rest/v1/session"): api,
          ("POST", "/api/webui/kill"): kill}
