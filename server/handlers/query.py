"""SELECT: bind against the catalog, run the plan, return typed rows."""

from __future__ import annotations

import contextvars
import itertools
import time
from collections.abc import Iterator

import pyarrow as pa
import pyarrow.compute as pc

from catalog.errors import AnalysisError
from executor.env import ExecEnv
from executor.expressions import EvalContext
from executor.spill import QuerySpill, SpillOptions
from executor.stream import stream
from planner.binder import BindContext, PlanStale, bind_statement
from planner.plan_cache import Template
from planner import logical as L
from planner import statistics
from planner.fragments import build_fragments
from planner.naming import NameGen
from planner.views import view_query
from server.handlers import plan_cache, profile
from server.handlers.context import StatementContext
from server.handlers.mv_rewrite import mv_rewrite
from server.handlers.profile import new_query_id
from server.handlers.explain import fragment_context, hidden_column_flags
from server.handlers.session_values import inline_session_values
from server.handlers.statement_checks import check_query
from catalog.alias_functions import expand as expand_alias_functions
from server.results import ResultColumn, RowsResult
from server.system_variables import bool_value
from storage.types import DataType, from_arrow


SMALL_FIRST_BATCH = 1024  # rows


def _plan(stmt, ctx: StatementContext, db: str | None = None,
          reuse: bool = False) -> tuple[object, list, ExecEnv, list]:
    """The plan, its result columns, the execution env and the tablet snapshots the plan holds
    (release them when the query ends: `_released`). `db`: bind in it instead of the session's.
    `reuse`: `stmt` is the statement of `ctx.sql` as the client sent it; the query
    runs the plan kept from its last run where it may (handlers/plan_cache.py)."""
    reuse_key = plan_cache.key(stmt, ctx) if reuse and db is None else None
    epoch, data_epoch = ctx.catalog.ddl_epoch, ctx.catalog.data_epoch
    kept = plan_cache.get(reuse_key, epoch) if reuse_key is not None else None
    bind_ctx = BindContext(ctx.catalog, db or ctx.db, NameGen(),
                           variables=ctx.session.variables.info_rows,
                           **hidden_column_flags(ctx),
                           view_columns=lambda view_db, view: view_columns(view_db, view, ctx))
    if kept is not None:
        try:
            plan, columns = kept[0].instantiate(bind_ctx), kept[1]
            check_query(plan, ctx)  # workload group, SQL block rules' scan bounds
            plan_cache.stats["hits"] += 1
            env = _exec_env(ctx)
            return plan, columns, env, _Held(bind_ctx.snapshots, env.spill)
        except PlanStale:  # a tablet or partition went, or a joined table's rows changed
            _release(bind_ctx.snapshots)
            bind_ctx.snapshots.clear()
        except BaseException:
            _release(bind_ctx.snapshots)
            raise
    if reuse_key is not None:
        plan_cache.stats["misses"] += 1
    stmt = inline_session_values(expand_alias_functions(stmt, ctx.catalog, db or ctx.db), ctx)
    if db is None:
        rewritten = mv_rewrite(stmt, ctx)
        if rewritten.tree is not None:  # its answer depends on the view's freshness: not kept
            stmt, reuse_key = rewritten.tree, None
    profiling = profile.enabled(ctx)
    try:
        with statistics.memoized(ctx.catalog.data_epoch):
            plan, columns = bind_statement(stmt, bind_ctx)
            # The distributed plan decides each join's distribution; the executor carries it
            # out (a plan without joins has nothing to decide: EXPLAIN builds its fragments).
            # A profiled query keeps it: its profile draws the operators (web UI).
            if profiling or not _single_relation(plan):
                fragments = build_fragments(plan, columns, fragment_context(ctx))
                ctx.fragments = fragments if profiling else None
            if reuse_key is not None:  # with each join's distribution (build_fragments)
                template = Template.of(plan, data_epoch)
                if template is not None:
                    plan_cache.put(reuse_key, epoch, template, columns)
        check_query(plan, ctx)  # workload group, SQL block rules' scan bounds
    except BaseException:
        _release(bind_ctx.snapshots)
        raise
    env = _exec_env(ctx, profiling)
    return plan, columns, env, _Held(bind_ctx.snapshots, env.spill)


def _exec_env(ctx: StatementContext, profiling: bool = False) -> ExecEnv:
    env = ExecEnv(ctx.engine, eval_context(ctx), ctx.pool,
                  mem_limit=int(ctx.session.variables.get("exec_mem_limit") or 0),
                  cancel=ctx.session.cancel, profile={} if profiling else None)
    env.spill = query_spill(ctx, env.mem_limit)
    ctx.session.progress = env.progress  # the web UI's progress page
    return env


_ONE_INPUT = (L.Filter, L.Project, L.Extend, L.Window, L.Aggregate, L.Sort, L.Limit, L.Distinct,
              L.Rename)


def _single_relation(plan: object) -> bool:
    """A chain of one-input nodes over one scan, inline table or row: no join in the plan."""
    while isinstance(plan, _ONE_INPUT):
        plan = plan.input
    return isinstance(plan, (L.OlapScan, L.InlineTable, L.OneRow))


class _Held(list):
    """What a running query holds until it ends: its tablet snapshots and its spill files."""

    def __init__(self, snapshots: list, spill: QuerySpill | None = None):
        super().__init__(snapshots)
        self.spill = spill


def _release(snapshots: list) -> None:
    for snapshot in snapshots:
        snapshot.release()
    spill = getattr(snapshots, "spill", None)
    if spill is not None:  # the query ended, failed or was killed: its spill files go
        spill.cleanup()


_SPILL_VARIABLES = ("enable_force_spill", "spill_min_revocable_mem", "spill_sort_batch_bytes",
                    "spill_aggregation_partition_count", "spill_hash_join_partition_count")


def query_spill(ctx: StatementContext, exec_mem_limit: int) -> QuerySpill | None:
    """The query's spill space when the session sets `enable_spill` (executor/spill/)."""
    variables = ctx.session.variables
    if not bool_value(variables.get("enable_spill") or False):
        return None
    values = {n: variables.get(n) for n in _SPILL_VARIABLES}
    options = SpillOptions(
        enable_force_spill=bool_value(values["enable_force_spill"] or False),
        **{n: max(1, int(values[n])) if "count" in n else max(0, int(values[n]))
           for n in _SPILL_VARIABLES[1:]})
    return QuerySpill(ctx.engine.spill_dir, new_query_id(), options, exec_mem_limit,
                      ctx.engine.process_memory.mem_limit)


def _released(batches, snapshots: list, session):
    """`batches`, then the snapshots released: at the end, on an error, or when the consumer
    drops the stream. The session lists them meanwhile: a client that disconnects mid-result
    releases them when its connection closes (DorisSession.close)."""
    held = getattr(session, "snapshots", None)
    if held is not None:
        held.append(snapshots)
    try:
        yield from batches
    finally:
        _release(snapshots)
        if held is not None and any(h is snapshots for h in held):
            held.remove(snapshots)


def _select(batch: pa.Table, columns: list) -> pa.Table:
    return pa.Table.from_arrays([batch.column(c.internal) for c in columns],
                                names=[c.name for c in columns])


def describe_query(stmt, ctx: StatementContext, db: str | None) -> list:
    """The result columns (names, declared types) of a query bound in `db`, without running it."""
    stmt = inline_session_values(expand_alias_functions(stmt, ctx.catalog, ctx.db), ctx)
    _, columns = bind_statement(stmt, BindContext(ctx.catalog, db, NameGen(),
                                                  variables=ctx.session.variables.info_rows,
                                                  **hidden_column_flags(ctx)))
    return columns


def run_query(stmt, ctx: StatementContext) -> tuple[pa.Table, list]:
    """The whole result table (columns in select order) and the result column infos."""
    plan, columns, env, snapshots = _plan(stmt, ctx)
    try:
        table = pa.concat_tables([_select(b, columns) for b in stream(plan, env)])
    finally:
        _release(snapshots)
    return table, columns


def query_batches(stmt, ctx: StatementContext) -> tuple[list, Iterator[pa.Table]]:
    """The result column infos and the result as a stream of batches (columns in select
    order); the snapshots are released when the stream ends or is closed."""
    plan, columns, env, snapshots = _plan(stmt, ctx)

    def batches() -> Iterator[pa.Table]:
        try:
            for b in stream(plan, env):
                yield _select(b, columns)
        finally:
            _release(snapshots)
    return columns, batches()


def eval_context(ctx: StatementContext) -> EvalContext:
    return EvalContext(now=ctx.now.replace(tzinfo=None),
                       time_zone=str(ctx.session.variables.get("time_zone")),
                       cancel=getattr(ctx.session, "cancel", None),
                       block_encryption_mode=str(
                           ctx.session.variables.get("block_encryption_mode") or ""))


def computed_type(column: pa.ChunkedArray, arrow_type: pa.DataType):
    """The Doris type of a computed column. A DATETIME is shown with fractional seconds only
    when the first rows have any (NOW() is `2024-01-02 03:04:05`, as in Doris)."""
    dtype = from_arrow(arrow_type)
    if dtype.kind == "DATETIME" and len(column):
        # pc.subsecond: the whole fraction (pc.microsecond is only its part below a millisecond,
        # 0 for .678)
        fractional = pc.any(pc.not_equal(pc.subsecond(column), 0)).as_py()
        dtype = DataType("DATETIME", scale=6 if fractional else 0)
    return dtype


_TYPING_VIEWS: contextvars.ContextVar[frozenset] = contextvars.ContextVar("typing_views",
                                                                         default=frozenset())


def view_columns(db: str, view: dict, ctx: StatementContext) -> list[ResultColumn]:
    """A view's columns (names, types) as a query over it reports them: its query run with
    LIMIT 0 in the view's database (SHOW COLUMNS, information_schema.columns). A view whose
    query reads information_schema.columns would type itself again: that is an error (the
    listing skips such a view)."""
    key = (db, view["name"])
    typing = _TYPING_VIEWS.get()
    if key in typing:
        raise AnalysisError(f"View {db}.{view['name']} refers to itself through information_schema")
    token = _TYPING_VIEWS.set(typing | {key})
    try:
        result = query(view_query(view).limit(0), ctx, db, profiled=False)
        for _ in result.batches:  # the stream's end releases its snapshots
            pass
    finally:
        _TYPING_VIEWS.reset(token)
    return result.columns


def _counted(batches, session):
    """The batches, and FOUND_ROWS() set to their rows once all are sent."""
    n = 0
    for b in batches:
        n += b.num_rows
        yield b
    session.found_rows = n


def select(stmt, ctx: StatementContext) -> RowsResult:
    """A SELECT statement as the client sent it: `query`, with the plan kept for the next run
    of the same text where it may be (handlers/plan_cache.py)."""
    return query(stmt, ctx, reuse=True)


def query(stmt, ctx: StatementContext, db: str | None = None, profiled: bool = True,
          reuse: bool = False) -> RowsResult:
    """Rows as a stream: the first batch is computed here (it fixes the result types and
    surfaces early errors), the rest as the connection sends them. `profiled`: False for
    the server's own metadata queries (no SHOW QUERY PROFILE entry)."""
    started = time.time()
    plan, columns, env, snapshots = _plan(stmt, ctx, db, reuse=reuse and profiled)
    batches = _released((_select(b, columns) for b in stream(plan, env)), snapshots,
                        ctx.session)
    first = next(batches, None)
    if first is None:  # no batch at all (e.g. LIMIT 0 over a constant ORDER BY): empty, typed
        first = pa.Table.from_arrays(
            [pa.array([], type=c.type.arrow() if c.type is not None else pa.null())
             for c in columns], names=[c.name for c in columns])
    rest: object = batches
    if first.num_rows <= SMALL_FIRST_BATCH:
        # A small first batch is often all there is (a point lookup, SELECT 1): a second pull
        # tells, and a complete result goes out as a list, without a thread hop per chunk
        # (server/protocol/connection.py:write_rows).
        second = next(batches, None)
        rest = [] if second is None else itertools.chain([second], batches)
    result_cols = []
    for i, (info, field) in enumerate(zip(columns, first.schema)):
        dtype = info.type if info.type is not None and info.type.arrow() == field.type \
            else computed_type(first.column(i), field.type)
        result_cols.append(ResultColumn(info.name, dtype))
    if not profiled:  # the server's own metadata queries leave FOUND_ROWS() alone
        return RowsResult(result_cols, [first] if isinstance(rest, list) else
                          itertools.chain([first], rest))
    if isinstance(rest, list):
        ctx.session.found_rows = first.num_rows
        result = RowsResult(result_cols, [first])
    else:
        result = RowsResult(result_cols, _counted(itertools.chain([first], rest), ctx.session))
    return profile.track(ctx, env, result, started,  # enable_profile: SHOW QUERY PROFILE
                         profile.scanned_indexes(plan), getattr(ctx, "fragments", None))
