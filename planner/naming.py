"""Names: fresh internal column names, and the output name MySQL/Doris give a select item."""

from __future__ import annotations

import itertools

from sqlglot import exp


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
    return item.sql(dialect="doris", normalize_functions="lower")
