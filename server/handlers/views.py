"""CREATE [OR REPLACE] VIEW, ALTER VIEW ... AS, SHOW CREATE VIEW (the views of catalog/views.py).

The view's query is bound once at CREATE (unknown tables and columns fail there, as in Doris)
and stored as text; SHOW CREATE VIEW answers Doris's four columns.
"""

from __future__ import annotations

from sqlglot import exp

from catalog.errors import NotSupported
from catalog.views import NotAView, UnknownView, create_view as store_view
from server.handlers.context import StatementContext
from server.handlers.query import describe_query
from server.results import OkResult, RowsResult, text_columns


def _target(stmt: exp.Expression) -> tuple[exp.Table, list[str]]:
    this = stmt.this
    if isinstance(this, exp.Schema):  # CREATE VIEW v (a, b) AS ...
        return this.this, [c.name for c in this.expressions]
    return this, []


def create_view(stmt: exp.Create, ctx: StatementContext, or_replace: bool = False) -> OkResult:
    table, columns = _target(stmt)
    query = stmt.expression
    if query is None:
        raise NotSupported("CREATE VIEW needs AS <query>")
    db = table.db or ctx.db
    sql = query.sql(dialect="doris")
    names = [c.name for c in describe_query(query, ctx, db)]  # fails on unknown names
    if columns and len(columns) != len(names):
        raise NotSupported("The number of columns of the view's column list does not match its query")
    comment = ""
    for prop in (stmt.args.get("properties") or exp.Properties(expressions=[])).expressions:
        if isinstance(prop, exp.SchemaCommentProperty):
            comment = prop.this.name
    store_view(ctx.catalog, db, table.name, sql, columns, comment,
               if_not_exists=bool(stmt.args.get("exists")),
               or_replace=or_replace or bool(stmt.args.get("replace")))
    return OkResult()


def alter_view(stmt: exp.Alter, ctx: StatementContext) -> OkResult:
    if str(stmt.args.get("kind") or "").upper() != "VIEW":
        raise NotSupported(f"Unsupported statement: ALTER {stmt.args.get('kind')}")
    actions = stmt.args.get("actions") or []
    if len(actions) != 1 or not isinstance(actions[0], exp.Query):
        raise NotSupported("Only ALTER VIEW ... AS <query> is supported")
    db = stmt.this.db or ctx.db
    with ctx.catalog.lock:
        if stmt.this.name not in ctx.catalog.get_db(db).views:
            raise UnknownView(stmt.this.name, db)
    create = exp.Create(this=stmt.this, kind="VIEW", expression=actions[0])
    return create_view(create, ctx, or_replace=True)


def show_create_view(db: str | None, name: str, ctx: StatementContext) -> RowsResult:
    with ctx.catalog.lock:
        database = ctx.catalog.get_db(db or ctx.db)
        view = database.views.get(name)
        if view is None:
            if name in database.tables:
                raise NotAView(name)
            raise UnknownView(name, database.name)
    columns = f"({', '.join(f'`{c}`' for c in view['columns'])})" if view.get("columns") else ""
    comment = f" COMMENT '{view['comment']}'" if view.get("comment") else ""
    text = f"CREATE VIEW `{name}`{columns}{comment} AS {view['sql']}"
    return text_columns(["View", "Create View", "character_set_client", "collation_connection"],
                        [(name, text, "utf8mb4", "utf8mb4_0900_bin")])
