"""Which SELECTs keep their bound plan, and under what key (planner/plan_cache.py keeps and
re-runs the plans).

    key(stmt, ctx)         the cache key of a query statement as the client sent it
                           (`ctx.as_sent`), or None when it may not be kept: a session value in it (@x, @@var,
                           DATABASE(), ...: inlined as literals when bound), profiling on, a
                           text longer than MAX_TEXT
    get(key, epoch) / put(key, epoch, template, columns)   (planner/plan_cache.Template)

The key is the statement's text, the current database, the user and the session's variables;
an entry is used only while the catalog's `ddl_epoch` is the one it was bound under.
"""

from __future__ import annotations

from sqlglot import exp

from server.handlers import profile
from server.handlers.context import StatementContext
from server.handlers.session_values import has_session_value
from planner.plan_cache import Template
from server.lru import Lru

CAPACITY = 256  # plans kept, least recently used dropped
MAX_TEXT = 4096  # longer texts (generated queries) are rarely repeated
MAX_TABLETS = 4096  # a plan reading more tablets is not kept (each costs ~0.1 KB kept)

_plans = Lru(CAPACITY)  # key -> (ddl epoch, template plan, result columns)
# runs of a kept plan; runs of a statement that may be kept which were bound (none kept, or the
# kept one stale)
stats = {"hits": 0, "misses": 0}


def clear() -> None:
    """Forget every kept plan (tests)."""
    _plans.clear()


def key(stmt: exp.Expression, ctx: StatementContext) -> tuple | None:
    if not ctx.as_sent or not isinstance(stmt, exp.Query) or len(ctx.sql) > MAX_TEXT or \
            profile.enabled(ctx):
        return None
    fingerprint = getattr(ctx.session.variables, "fingerprint", None)
    if fingerprint is None or has_session_value(stmt):
        return None
    access = getattr(ctx.session, "access", None)
    user = access.user.identity if access is not None else None
    return ctx.sql, ctx.db, user, fingerprint()


def get(key: tuple, epoch: int) -> tuple | None:
    """(template plan, result columns) kept under `key` and bound at `epoch`, or None."""
    found = _plans.get(key)
    if found is None or found[0] != epoch:
        return None
    return found[1], found[2]


def put(key: tuple, epoch: int, template: Template, columns: list) -> None:
    if template.tablets <= MAX_TABLETS:
        _plans.put(key, (epoch, template, columns))
