"""QueryProfile: the kept query profiles (`SET enable_profile = true`; server/handlers/
profile.py), newest first; one opens as its operator tree drawn as an inline SVG (graph.py)
with rows, time and memory per operator and the slowest one highlighted, then the profile text.
An account without ADMIN sees only its own queries' profiles (as Doris's QueryProfileAction).

    GET /QueryProfile               the list
    GET /QueryProfile/<query id>    one profile
    GET /rest/v1/query_profile      the list as JSON
    GET /rest/v1/query_profile/<query id>   {"profile": text, "operators": tree, "slowest": id}
"""

from __future__ import annotations

from server.handlers.profile import LIST_COLUMNS
from server.handlers.profile_tree import slowest
from server.webui import render
from server.webui.graph import layout
from server.webui.responses import NotFound, Response, ok


def _visible(ctx) -> list:
    profiles = ctx.services.profiles.newest_first()
    if ctx.caller.is_admin:
        return profiles
    return [p for p in profiles if p.user == ctx.caller.name]


def _one(ctx, query_id: str):
    profile = next((p for p in _visible(ctx) if p.query_id == query_id), None)
    if profile is None:
        raise NotFound(f"Query {query_id} does not exist or its profile is not kept")
    return profile


def listing(ctx, *_):
    rows = [(list(p.row()), f"/QueryProfile/{p.query_id}") for p in _visible(ctx)]
    return Response(200, render.page("profiles.html", ctx.caller, active="QueryProfile",
                                     names=LIST_COLUMNS, rows=rows))


def detail(ctx, query_id: str):
    profile = _one(ctx, query_id)
    slow = slowest(profile.operators)
    return Response(200, render.page("profile.html", ctx.caller, active="QueryProfile",
                                     profile=profile, text=profile.text(),
                                     graph=layout(profile.operators, slow)))


def api_list(ctx, *_):
    rows = [list(p.row()) for p in _visible(ctx)]
    return ok({"column_names": LIST_COLUMNS, "rows": rows}, len(rows))


def api_one(ctx, query_id: str):
    profile = _one(ctx, query_id)
    return ok({"profile": profile.text(), "operators": profile.operators,
               "slowest": slowest(profile.operators)})


ROUTES = {("GET", "/QueryProfile"): listing, ("GET", r"/QueryProfile/([0-9a-f-]+)"): detail,
          ("GET", "/rest/v1/query_profile"): api_list,
          ("GET", r"/rest/v1/query_profile/([0-9a-f-]+)"): api_one}
