"""Configuration: the FE configs (ADMIN SHOW FRONTEND CONFIG: needs ADMIN, as in Doris) and the
session variables (SHOW VARIABLES: the caller's session defaults), each as a table; a section
the caller may not see shows the error in its place.

    GET /Configuration
"""

from __future__ import annotations

from server.webui import render
from server.webui.responses import Response
from server.webui.sql import StatementFailed, run, table_of


def _section(ctx, title: str, sql: str) -> dict:
    try:
        names, rows = table_of(run(ctx.services, ctx.caller, sql))
    except StatementFailed as e:
        return {"title": title, "error": str(e), "names": [], "rows": []}
    return {"title": title, "error": "", "names": names, "rows": [(r, None) for r in rows]}


def page(ctx, *_):
    sections = [_section(ctx, "Frontend configuration", "ADMIN SHOW FRONTEND CONFIG"),
                _section(ctx, "Session variables", "SHOW VARIABLES")]
    return Response(200, render.page("configuration.html", ctx.caller, active="Configuration",
                                     sections=sections))


ROUTES = {("GET", "/Configuration"): page}
