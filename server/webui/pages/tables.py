"""Tables: a browser over databases -> tables -> partitions, tablets and rollups, with row
counts and sizes, from the statements a MySQL client would run (as the caller, so it shows
what the account may see):

    /Tables                   SHOW DATABASES
    /Tables?db=d              SHOW DATA (the tables' sizes, replicas and row counts)
    /Tables?db=d&table=t      SHOW DATA FROM d.t (indexes and rollups), SHOW PARTITIONS,
                              SHOW TABLETS
"""

from __future__ import annotations

from urllib.parse import urlencode

from catalog.names import quote_identifier
from server.webui import render
from server.webui.responses import Response
from server.webui.pages.sections import section
from server.webui.sql import StatementFailed, run, table_of


def page(ctx, *_):
    db, table = ctx.arg("db"), ctx.arg("table")
    if not db:
        sections = [section(ctx, "Databases", "SHOW DATABASES",
                             link=lambda name: "/Tables?" + urlencode({"db": name}))]
    elif not table:
        try:
            _, rows = table_of(run(ctx.services, ctx.caller,
                                   f"SHOW TABLES FROM {quote_identifier(db)}"))
            tables = {r[0] for r in rows}
        except StatementFailed:
            tables = set()
        sections = [section(ctx, f"Tables of {db}", "SHOW DATA", db, link=lambda name:
                             "/Tables?" + urlencode({"db": db, "table": name})
                             if name in tables else None)]
    else:
        name = f"{quote_identifier(db)}.{quote_identifier(table)}"
        sections = [section(ctx, "Indexes and rollups", f"SHOW DATA FROM {name}"),
                    section(ctx, "Partitions", f"SHOW PARTITIONS FROM {name}"),
                    section(ctx, "Tablets", f"SHOW TABLETS FROM {name}")]
    return Response(200, render.page("tables.html", ctx.caller, active="Tables", db=db,
                                     table=table, sections=sections,
                                     db_href="/Tables?" + urlencode({"db": db})))


ROUTES = {("GET", "/Tables"): page}
