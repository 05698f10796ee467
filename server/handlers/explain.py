"""EXPLAIN / DESC <query>: the distributed plan in Doris's text, one line per row."""

from __future__ import annotations

import time

from catalog.statements import ExplainStmt
from executor.env import ExecEnv
from executor.stream import stream
from planner.binder import BindContext, bind_statement
from planner.explain import render
from planner.explain_graph import render_graph
from planner.fragments import FragmentContext, build_fragments
from planner.naming import NameGen
from planner.short_circuit import PointPlan, plan_point, shows_short_circuit
from planner import statistics
from server.handlers.context import StatementContext
from server.handlers.mv_rewrite import mv_rewrite
from server.handlers.session_values import inline_session_values
from catalog.alias_functions import expand as expand_alias_functions
from server.parser.literals import split_literals
from server.results import RowsResult, text_columns

_SESSION_KEYS = ("enable_bucket_shuffle_join", "disable_colocate_plan",
                 "broadcast_row_count_limit", "broadcast_hashtable_mem_limit_percentage",
                 "auto_broadcast_join_threshold", "exec_mem_limit", "enable_nereids_planner")


def hidden_column_flags(ctx: StatementContext) -> dict[str, bool]:
    """The session variables that decide how scans treat hidden columns, MATCH on columns
    without an inverted index and runtime filters on partition columns (planner/binder.py)."""
    variables = ctx.session.variables
    return {"show_hidden_columns": bool(variables.get("show_hidden_columns")),
            "skip_delete_sign": bool(variables.get("skip_delete_sign")),
            "match_without_index": variables.get("enable_match_without_inverted_index",
                                                 True) not in (False, 0, "false", "0"),
            "runtime_partition_prune": variables.get("enable_runtime_filter_partition_prune",
                                                     True) not in (False, 0, "false", "0")}


def fragment_context(ctx: StatementContext) -> FragmentContext:
    variables = ctx.session.variables
    session = {k: variables.get(k) for k in _SESSION_KEYS}
    fe_config = getattr(ctx.catalog, "fe_config_values", lambda: {})()
    colocation = getattr(ctx.catalog, "colocation_of", None)
    return FragmentContext(ctx.catalog, session, fe_config, colocation)


def explain(stmt: ExplainStmt, ctx: StatementContext) -> RowsResult:
    query = inline_session_values(expand_alias_functions(stmt.query, ctx.catalog, ctx.db), ctx)
    rewritten = mv_rewrite(query, ctx)
    query = rewritten.tree if rewritten.tree is not None else query
    with statistics.memoized(ctx.catalog.data_epoch):  # each scan's statistics summed once
        plan, columns = bind_statement(query, BindContext(
            ctx.catalog, ctx.db, NameGen(), variables=ctx.session.variables.info_rows,
            **hidden_column_flags(ctx)))
        fragments = build_fragments(plan, columns, fragment_context(ctx))
    if _short_circuit(query, ctx):
        _mark_short_circuit(fragments)
    summary: list[str] = []
    if stmt.level == "ANALYZE":
        summary = _analyze(plan, fragments, ctx)
    if stmt.level == "GRAPH":
        lines = render_graph(fragments)
    else:
        lines = render(fragments, verbose=stmt.level == "VERBOSE") + summary + \
            rewritten.summary()
    return text_columns(["Explain String"], [(line,) for line in lines])


def _short_circuit(query, ctx: StatementContext) -> bool:
    """Whether the query is a lookup Doris answers by its short-circuit point query
    (planner/short_circuit.py:shows_short_circuit) and the session lets it."""
    variables = ctx.session.variables
    if not variables.get("enable_short_circuit_query"):
        return False
    split = split_literals(query.sql(dialect="doris"))
    if split is None:
        return False
    # waits for the catalog lock: a compaction or publish holding it must not decide the text
    plan = plan_point(query, ctx.catalog, ctx.db, split[1], wait=True)
    return isinstance(plan, PointPlan) and shows_short_circuit(plan)


def _mark_short_circuit(fragments: list) -> None:
    """`SHORT-CIRCUIT` as the scan node's last line, as Doris's OlapScanNode prints it."""
    def visit(node) -> None:
        if node.name == "OlapScanNode":
            node.details.append("SHORT-CIRCUIT")
        for child in node.children:
            visit(child)
    for f in fragments:
        visit(f.root)


def _analyze(plan: object, fragments: list, ctx: StatementContext) -> list[str]:
    """Run the query, then put each node's actual rows, time and exchanged bytes in the plan."""
    from server.handlers.query import eval_context  # noqa: PLC0415 - query imports this module
    env = ExecEnv(ctx.engine, eval_context(ctx), ctx.pool, profile={},
                  mem_limit=int(ctx.session.variables.get("exec_mem_limit") or 0))
    start = time.perf_counter()
    rows = sum(b.num_rows for b in stream(plan, env))
    total = time.perf_counter() - start

    def annotate(node) -> None:
        entry = env.profile.get(node.source)
        if entry is not None and not node.name.endswith("EXCHANGE"):
            line = f"actual rows={entry[0]}, time={entry[1] * 1000:.1f}ms"
            if node.name == "HASH JOIN":
                line += f", exchange bytes={entry[2]}"
            node.details.append(line)
        for child in node.children:
            annotate(child)
    for f in fragments:
        annotate(f.root)
    moved = ", ".join(f"{k}={v}" for k, v in sorted(env.exchange_bytes.items())) or "none"
    counters = ", ".join(f"{k}={v}" for k, v in env.scan_stats.profile().items() if v)
    return ["", "QUERY PROFILE", f"  rows returned: {rows}", f"  total time: {total * 1000:.1f}ms",
            f"  exchange bytes: {moved}", f"  scan: {counters}"]
