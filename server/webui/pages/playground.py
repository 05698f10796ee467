"""Playground: pick a database, run SQL, see the result table or the error in place, cancel a
running statement (KILL QUERY of the login's session).

    GET  /Playground                       the page (databases the account can see)
    POST /api/webui/query   {"db", "stmt"} run it: result_set (columns, rows, total) or
                                           exec_status, or {"error": text}
    POST /api/webui/cancel  {"connection_id"?}  KILL QUERY of the login's statement (or of the
                                           given connection, with KILL's own checks)
"""

from __future__ import annotations

from server.webui import render
from server.webui.responses import Response, failed, ok
from server.webui.sql import StatementFailed, run, run_playground, table_of


def page(ctx, *_):
    _, rows = table_of(run(ctx.services, ctx.caller, "SHOW DATABASES"))
    databases = [r[0] for r in rows]
    chosen = ctx.arg("db") or (ctx.caller.login.session.database if ctx.caller.login
                               and ctx.caller.login.session else "") or ""
    return Response(200, render.page("playground.html", ctx.caller, active="Playground",
                                     databases=databases, chosen=chosen,
                                     connection_id=ctx.caller.login.connection_id
                                     if ctx.caller.login else ""))


def query(ctx, *_):
    body = ctx.json_body()
    stmt, db = body.get("stmt"), body.get("db")
    if not isinstance(stmt, str) or not stmt.strip():
        return ok({"error": "the request body must be JSON with a \"stmt\" string"})
    return ok(run_playground(ctx.services, ctx.caller, stmt,
                             db if isinstance(db, str) and db else None))


def cancel(ctx, *_):
    target = ctx.json_body().get("connection_id")
    if target is None and ctx.caller.login is not None:
        target = ctx.caller.login.connection_id
    if not isinstance(target, int):
        return failed("no statement to cancel: give \"connection_id\"")
    try:
        run(ctx.services, ctx.caller, f"KILL QUERY {target}")
    except StatementFailed as e:
        return failed(str(e))
    return ok({"killed": target})


ROUTES = {("GET", "/Playground"): page, ("POST", "/api/webui/query"): query,
          ("POST", "/api/webui/cancel"): cancel}
