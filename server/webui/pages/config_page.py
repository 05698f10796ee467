"""Configuration: the FE configs (ADMIN SHOW FRONTEND CONFIG: needs ADMIN, as in Doris) and the
session variables (SHOW VARIABLES: the caller's session defaults), each as a table; a section
the caller may not see shows the error in its place.

    GET /Configuration
"""

from __future__ import annotations

from server.webui import render
from server.webui.pages.sections import section
from server.webui.responses import Response


def page(ctx, *_):
    sections = [section(ctx, "Frontend configuration", "ADMIN SHOW FRONTEND CONFIG"),
                section(ctx, "Session variables", "SHOW VARIABLES")]
    return Response(200, render.page("configuration.html", ctx.caller, active="Configuration",
                                     sections=sections))


ROUTES = {("GET", "/Configuration"): page}
