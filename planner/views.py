"""A view's stored query as the binder binds it where the view's name stands in a FROM clause
(catalog/views.py keeps the text): parsed, and its select items renamed to the view's column
list when the view has one."""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from catalog.errors import AnalysisError


def view_query(view: dict) -> exp.Expression:
    query = sqlglot.parse_one(view["sql"], read="doris")
    columns = view.get("columns") or []
    if not columns:
        return query
    if not isinstance(query, exp.Select) or len(query.expressions) != len(columns):
        raise AnalysisError("The number of columns of the view's column list does not match its query")
    renamed = query.copy()
    renamed.set("expressions", [exp.alias_(e.this if isinstance(e, exp.Alias) else e, c, quoted=True)
                                for e, c in zip(query.expressions, columns)])
    return renamed
