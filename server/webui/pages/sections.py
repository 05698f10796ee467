"""A page section: a titled table of one statement's rows, run as the caller; a statement the
caller may not run leaves its error in the section's place (templates/sections.html)."""

from __future__ import annotations

from server.webui.sql import StatementFailed, run, table_of


def section(ctx, title: str, sql: str, db: str | None = None, link=None) -> dict:
    """`link(first cell)`: the href of a row's first cell, or None."""
    try:
        names, rows = table_of(run(ctx.services, ctx.caller, sql, db))
    except StatementFailed as e:
        return {"title": title, "error": str(e), "names": [], "rows": []}
    return {"title": title, "error": "", "names": names,
            "rows": [(r, link(r[0]) if link else None) for r in rows]}
