"""System: the SHOW PROC tree browsed from `/` (server/handlers/proc_dirs.py), run as the
caller (SHOW PROC needs ADMIN, as in Doris). A row's first column links one level down where
that level is a directory, as Doris FE's System page links them.

    GET /System?path=/dbs          the page
    GET /rest/v1/system?path=/dbs  {"column_names", "rows", "links"} (a link or null per row)
"""

from __future__ import annotations

import re
from urllib.parse import quote

from server.webui import render
from server.webui.responses import Response, ok
from server.webui.sql import run, table_of

# the directories whose rows name a directory below (their first column)
_LINKED = [re.compile(p) for p in (
    r"^/$", r"^/dbs$", r"^/dbs/\d+$", r"^/dbs/\d+/\d+$", r"^/dbs/\d+/\d+/(temp_)?partitions$",
    r"^/dbs/\d+/\d+/(temp_)?partitions/\d+$", r"^/dbs/\d+/\d+/index_schema$",
    r"^/colocation_group$")]


def normalized(path: str) -> str:
    parts = [p for p in path.split("/") if p]
    return "/" + "/".join(parts)


def listing(ctx) -> tuple[str, list[str], list[list], list]:
    path = normalized(ctx.arg("path", "/"))
    quoted = path.replace("\\", "\\\\").replace("'", "''")
    names, rows = table_of(run(ctx.services, ctx.caller, f"SHOW PROC '{quoted}'"))
    linked = any(p.match(path) for p in _LINKED)
    links = [f"{path.rstrip('/')}/{row[0]}" if linked and row and row[0] is not None else None
             for row in rows]
    return path, names, rows, links


def page(ctx, *_):
    path, names, rows, links = listing(ctx)
    crumbs, prefix = [("/", "/")], ""
    for part in [p for p in path.split("/") if p]:
        prefix += "/" + part
        crumbs.append((prefix, part))
    hrefs = [f"/System?path={quote(link)}" if link else None for link in links]
    return Response(200, render.page("system.html", ctx.caller, active="System", path=path,
                                     names=names, rows=list(zip(rows, hrefs)), crumbs=crumbs))


def api(ctx, *_):
    path, names, rows, links = listing(ctx)
    return ok({"path": path, "column_names": names, "rows": rows, "links": links}, len(rows))


ROUTES = {("GET", "/System"): page, ("GET", "/rest/v1/system"): api}
