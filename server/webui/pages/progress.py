"""Progress: what runs now and how far it is, polled by the page once a second.

    queries      every session's running statement (SHOW PROCESSLIST's sessions): elapsed
                 time, rows read and tablets read of those planned (executor/env.ScanProgress),
                 ScanPercent: the share of planned tablets read (the scans' progress; joins,
                 sorts and aggregates after them are not counted)
    stream loads the Stream Loads running now (server/http/running_loads.py): rows read, bytes
                 received of the body's length, a percent when the length is known
    spark loads  Spark Load jobs not yet finished or cancelled, with their Progress column

An account without ADMIN sees only its own statements and loads (as SHOW PROCESSLIST).

    GET /Progress
    GET /api/webui/progress    {"queries": [...], "stream_loads": [...], "spark_loads": [...]}
"""

from __future__ import annotations

import time

from server.webui import render
from server.webui.responses import Response, ok

_DONE = ("FINISHED", "CANCELLED")


def _queries(ctx, now: float) -> list[dict]:
    out = []
    for cid, s in sorted(dict(ctx.services.sessions).items()):
        sql = s.current_sql
        if not sql or not _mine(ctx, getattr(getattr(s, "access", None), "name", None)):
            continue
        p = getattr(s, "progress", None)
        total = p.tablets_total if p is not None else 0
        done = p.tablets_done if p is not None else 0
        out.append({"ConnectionId": cid, "User": s.username or "root", "Db": s.database or "",
                    "ElapsedMs": int((now - s.statement_started) * 1000),
                    "RowsRead": p.rows_read if p is not None else 0,
                    "TabletsRead": done, "TabletsTotal": total,
                    "ScanPercent": round(100.0 * done / total, 1) if total else None,
                    "Statement": sql[:300]})
    return out


def _mine(ctx, user: str | None) -> bool:
    return ctx.caller.is_admin or user == ctx.caller.name


def snapshot(ctx) -> dict:
    now = time.time()
    loads = ctx.http.loads.snapshot() if ctx.http is not None else []
    spark = [{"JobId": j["job_id"], "Label": j.get("Label"), "Db": j.get("db"),
              "State": j.get("State"), "Progress": j.get("Progress")}
             for j in list(ctx.services.catalog.load_jobs.values())
             if j.get("State") not in _DONE and ctx.caller.access.visible_db(j.get("db", ""))]
    return {"queries": _queries(ctx, now),
            "stream_loads": [load.row() for load in loads if _mine(ctx, load.user)],
            "spark_loads": spark}


def page(ctx, *_):
    return Response(200, render.page("progress.html", ctx.caller, active="Progress"))


def api(ctx, *_):
    return ok(snapshot(ctx))


ROUTES = {("GET", "/Progress"): page, ("GET", "/api/webui/progress"): api}
