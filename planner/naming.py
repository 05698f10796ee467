"""Names: fresh internal column names, and the output name MySQL/Doris give a select item."""

from __future__ import annotations

import itertools

from sqlglot import exp


# Functions sqlglot normalises to nodes whose SQL text differs from what the user wrote.
_FUNCTION_NAMES = {exp.CurrentSchema: "database()", exp.CurrentUser: "current_user()",
                   exp.CurrentVersion: "version()"}


class NameGen:
    """Fresh internal names (`__o1`, `__g2`, ...) unique within one query."""

    def __init__(self) -> None:
        self._counter = itertools.count(1)

    def new(self, prefix: str) -> str:
        return f"{prefix}{next(self._counter)}"


def output_name(item: exp.Expression) -> str:
    """The result column name: the alias, the bare column name, or the expression's text."""
    if isinstance(item, exp.Alias):
        return item.alias
    if isinstance(item, exp.Column) and not isinstance(item.this, exp.Star):
        return item.name
    if isinstance(item, exp.SessionParameter):
        kind = item.text("kind")
        return f"@@{kind.lower() + '.' if kind else ''}{item.name}"
    if type(item) in _FUNCTION_NAMES:
        return _FUNCTION_NAMES[type(item)]
    if isinstance(item, exp.Literal) and not item.is_string:
        return item.this  # a number prints as written (`SELECT 1`)
    return _parenthesise(item.copy()).sql(dialect="doris", normalize_functions="lower")


def _parenthesise(node: exp.Expression) -> exp.Expression:
    """Doris (Nereids) prints every binary operation in parentheses: `(1 + 1)`, `(a + (b * c))`."""
    if isinstance(node, exp.Paren) and isinstance(node.this, exp.Binary):
        return _parenthesise(node.this)
    if isinstance(node, exp.Median):  # sqlglot writes PERCENTILE_CONT(x, 0.5)
        node = exp.Anonymous(this="median", expressions=[node.this])
    if isinstance(node, exp.Like) and node.meta.get("function"):  # like(s, p) as written
        node = exp.Anonymous(this="like", expressions=[node.this, node.expression])
    if isinstance(node, exp.Rand) and node.args.get("lower") is not None:  # random(a, b)
        node = exp.Anonymous(this="random", expressions=[node.this, node.args["lower"]])
    if isinstance(node, exp.ArrayFilter):  # sqlglot writes filter(...)
        node = exp.Anonymous(this="array_filter", expressions=[node.this, node.expression])
    if isinstance(node, exp.GroupConcat) and node.args.get("separator") is None:
        node = exp.Anonymous(this="group_concat", expressions=[node.this])  # no ", ',')" added
    if isinstance(node, exp.Anonymous) and node.name.upper() == "__ENCRYPT_KEY":
        db, name = (e.name for e in node.expressions)  # KEY [db.]k as written
        return exp.var(f"key {db + '.' if db else ''}{name}")
    if isinstance(node, exp.Coalesce) and node.meta.get("function"):  # IFNULL / NVL as written
        node = exp.Anonymous(this=node.meta["function"],
                             expressions=[node.this, *node.expressions])
    for key, value in list(node.args.items()):
        if isinstance(value, exp.Expression):
            node.set(key, _parenthesise(value))
        elif isinstance(value, list):
            node.set(key, [_parenthesise(v) if isinstance(v, exp.Expression) else v for v in value])
    if isinstance(node, exp.Binary) and not isinstance(node, (exp.Dot, exp.Func)):
        return exp.Paren(this=node)
    return node
