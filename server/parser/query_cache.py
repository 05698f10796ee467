"""Parsed queries kept across statements: the sqlglot tree of a one-statement SELECT, keyed on
its exact text (issue 14: parsing is a large share of a point query's fixed cost).

Parsing depends on the text alone (no session state, no catalog: names are resolved when the
query is bound, so DDL cannot make an entry stale), so the tree a text parses to can be reused;
each use gets its own copy, as binding rewrites trees in place. Only queries are kept (SELECT,
set operations, WITH ...): other statements are rarer, and some carry state from parsing (an
INSERT's label). Errors are never kept.

    cached(sql) -> a fresh copy of the tree, or None
    remember(sql, stmt)
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from sqlglot import exp

CAPACITY = 512  # distinct texts
MAX_TEXT = 4096  # longer texts (generated queries) are rarely repeated verbatim

_entries: OrderedDict[str, exp.Expression] = OrderedDict()
_lock = threading.Lock()


def cached(sql: str) -> exp.Expression | None:
    with _lock:
        stmt = _entries.get(sql)
        if stmt is None:
            return None
        _entries.move_to_end(sql)
    return stmt.copy()


def remember(sql: str, stmt: object) -> None:
    if len(sql) > MAX_TEXT or not isinstance(stmt, exp.Query) or stmt.meta:
        return
    if any(True for _ in stmt.find_all(exp.Placeholder, exp.Parameter)):
        return
    kept = stmt.copy()
    with _lock:
        _entries[sql] = kept
        while len(_entries) > CAPACITY:
            _entries.popitem(last=False)
