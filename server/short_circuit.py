"""Statements answered on the protocol's event loop: no parse, no bind, no thread hop (issue 14
item 4, Doris's short-circuit point query).

    answer(session, sql)  [result], or None: the statement runs the general way
                          (DorisSession.execute in a worker thread)

Two kinds of statement qualify:

- **Key lookups** (planner/short_circuit.py): the text is split into a template and its
  literals (server/parser/literals.py); the template's light plan is cached per current
  database, built from one real parse the first time, and kept while the catalog's
  `ddl_epoch` is unchanged (any DDL, privilege or property change moves it; loads do not). Each
  execution turns the literals into storage predicates, prunes partitions and buckets from
  them, captures the tablet's snapshot and reads it here (executor/point_read.py: a sorted-key
  search of each segment, storage/point_lookup.py, where no merge is needed). The caller's
  SELECT privilege is checked once per session and template and again after any change of
  the epoch; a refused check, or a row policy on the table for the caller
  (catalog/row_policy.py), leaves the statement to the general path, which reports Doris's
  error or binds the policy.
- **Constant queries** (`SELECT 1`, what connection pools send to validate a connection): a
  SELECT of literals only, without FROM, answered from the result the general path gave for
  the same text (`is_constant` on the parse, `remember_constant` after the run); nothing in
  it depends on the session or the data.

Not here (the general path): enable_profile (SHOW QUERY PROFILE needs the operators),
show_hidden_columns / skip_delete_sign, enable_short_circuit_query = false, a catalog lock
held by someone else (never waited for on the event loop), a constant that is not exactly its
comparison. A key lookup is read on the event loop: its cost is the rows matching the key
(one per tablet on a Unique or Aggregate table, more on a Duplicate table with repeated keys).
The statement counts in /metrics as any other; KILL and query_timeout have nothing to stop in a
statement that never leaves the loop; PROCESSLIST does not see it.
"""

from __future__ import annotations

import time
from datetime import datetime, timezone

import pyarrow as pa
from sqlglot import exp

from catalog import row_policy
from executor.point_read import read_point
from planner.short_circuit import BUSY, PointPlan, bind_point, plan_point
from server.handlers.context import StatementContext
from server.lru import Lru
from server.parser import query_cache
from server.parser.literals import split_literals
from server.parser.statement import parse_statement, split_statements
from server.privileges import check_statement
from server.results import ResultColumn, RowsResult

CAPACITY = 1024  # light plans (and constant results) kept, least recently used dropped
_OFF_VARIABLES = ("enable_profile", "is_report_success", "show_hidden_columns", "workload_group",
                  "skip_delete_sign")
_CONSTANT_NODES = (exp.Literal, exp.Alias, exp.Identifier, exp.Neg, exp.Paren)

_plans = Lru(CAPACITY)  # (database, template) -> (ddl epoch, PointPlan or None)
_constants = Lru(CAPACITY)  # text -> (columns, batches)


def clear() -> None:
    """Forget every cached plan and constant result (tests)."""
    _plans.clear()
    _constants.clear()


def answer(session, sql: str) -> list | None:
    head = sql[:16].lstrip()
    if head[:6].upper() != "SELECT" and not head.startswith("/*"):
        return None  # only a SELECT is a key lookup or a constant: nothing else is looked at
    if not _enabled(session, sql):
        return None
    constant = _constants.get(sql)
    if constant is not None:
        return _finish(session, time.time(), RowsResult(*constant))
    if head[:6].upper() != "SELECT":
        return None  # a commented constant query is remembered; a lookup starts with SELECT
    split = split_literals(sql)
    if split is None:
        return None
    return _lookup(session, split, lambda: sql)


def answer_split(session, split: tuple[str, tuple[str, ...]], text) -> list | None:
    """`answer` of a statement given as `split_literals` would split it (a prepared
    statement's text and parameters: server/parser/literals.split_prepared), `text()` its
    SQL when a plan must be made from a parse."""
    template = split[0]
    if template[:6].upper() != "SELECT" or not _enabled(session, template):
        return None
    return _lookup(session, split, text)


def _enabled(session, text: str) -> bool:
    """Whether the session's variables let `text` take the short path."""
    variables = session.variables
    if not variables.get("enable_short_circuit_query") or \
            any(variables.get(v) for v in _OFF_VARIABLES):
        return False
    if session.services.catalog.sql_block_rules:  # checked on the general path
        return False
    return "||" not in text  # OR or concat by the session's sql_mode (server/parser/pipes.py)


def _lookup(session, split: tuple[str, tuple[str, ...]], text) -> list | None:
    template, values = split
    started = time.time()
    catalog = session.services.catalog
    key = (session.database, template)
    epoch = catalog.ddl_epoch
    cached = _plans.get(key)
    if cached is None or cached[0] != epoch:
        planned = _plan(session, text(), values)
        if planned is BUSY:  # the catalog lock was held: the general path, no verdict kept
            return None
        cached = (epoch, planned, *_result_shape(planned))
        _plans.put(key, cached)
    plan = cached[1]
    if plan is None or not _allowed(session, key, plan, epoch, text):
        return None
    bound = bind_point(plan, values, catalog)
    if bound is None:
        return None
    predicates, snapshots = bound
    table = read_point(snapshots, plan.columns, predicates, cached[2])
    # the plan's own columns tuple: the connection keeps its packets by identity
    return _finish(session, started, RowsResult(cached[3], [table]))


def _result_shape(plan) -> tuple:
    """(Arrow schema, result columns) of a light plan, built once per cached plan."""
    if not isinstance(plan, PointPlan):
        return None, ()
    schema = pa.schema([pa.field(n, t.arrow()) for n, t in zip(plan.names, plan.types)])
    return schema, tuple(ResultColumn(n, t) for n, t in zip(plan.names, plan.types))


def _finish(session, started: float, result: RowsResult) -> list:
    session.timer.disarm()  # the previous statement's timeout (it covered its streaming)
    session.cancel.clear()
    session.found_rows = sum(b.num_rows for b in result.batches)
    metrics = getattr(session.services, "metrics", None)
    if metrics is not None:
        metrics.record(time.time() - started, False)
    return [result]


def _plan(session, sql: str, values: tuple[str, ...]) -> object:
    """The light plan of `sql` from a real parse, None (not a key lookup, or not parsable
    here: the general path reports the error), or BUSY (ask again later)."""
    stmt = query_cache.cached(sql)
    if stmt is None:
        try:
            statements = split_statements(sql)
            if len(statements) != 1:
                return None
            stmt = parse_statement(*statements[0])
        except Exception:  # noqa: BLE001 - a syntax error is the general path's to report
            return None
    return plan_point(stmt, session.services.catalog, session.database, values)


def _allowed(session, key: tuple, plan: PointPlan, epoch: int, text) -> bool:
    """Whether the session may run `plan`: checked as the general path checks (SELECT on the
    table), remembered per session and template until the catalog epoch or the account moves."""
    access = getattr(session, "access", None)
    checked = session.short_circuit_checked
    if checked.get(key) == (epoch, id(access)):
        return True
    services = session.services
    ctx = StatementContext(services.catalog, services.engine, services.pool, session,
                           datetime.now(timezone.utc).astimezone(), text())
    if not services.catalog.lock.acquire(blocking=False):  # the account model's lock too
        return False
    try:
        check_statement(plan.stmt, ctx)
        if access is not None and row_policy.filters_for(
                services.catalog, plan.table.table_id, access.user.name,
                list(access.user.roles)) is not None:
            return False  # read through row policies: the general path binds them
    except Exception:  # noqa: BLE001 - refused: the general path raises Doris's error
        return False
    finally:
        services.catalog.lock.release()
    checked[key] = (epoch, id(access))
    return True


def is_constant(stmt: object) -> bool:
    """A SELECT of literals without FROM (its result depends on nothing), as parsed."""
    if not isinstance(stmt, exp.Select) or stmt.meta:
        return False
    if any(v for k, v in stmt.args.items() if k != "expressions"):
        return False
    return all(isinstance(n, _CONSTANT_NODES) for item in stmt.expressions for n in item.walk())


def remember_constant(sql: str, result: object) -> None:
    """Keep the result of `sql`, a constant query (`is_constant` before it ran) that ran the
    general way and produced one complete batch."""
    if not isinstance(result, RowsResult) or not isinstance(result.batches, list) or \
            len(result.batches) != 1 or len(sql) > 256:
        return
    _constants.put(sql, (list(result.columns), list(result.batches)))
