"""Runs a logical plan bottom-up: one handler per node type, each calling one operator.

This is the single-instance executor of the walking skeleton: every node runs once over whole
Arrow tables (scans read their tablets in parallel). Fragments, instances per backend and
exchanges replace it in the distributed planning issue.
"""

from __future__ import annotations

import time
from typing import Callable

import pyarrow as pa

from executor.env import ExecEnv
from executor.errors import ExecutionError
from executor.operators.aggregate import run_aggregate
from executor.operators.aggregate_scan import run_scan_aggregate
from executor.operators.filter import run_filter
from executor.distributed import run_distributed_join
from executor.operators.limit import run_distinct, run_limit
from executor.operators.project import project_for_aggregate, run_project
from executor.operators.scan import run_scan
from executor.operators.set_op import run_set_op
from executor.operators.sort import run_sort
from executor.operators.window import run_window
from executor.operators.table_function import run_table_function
from planner import logical as L
from storage.process_memory import over_limit


def execute(node: object, env: ExecEnv) -> pa.Table:
    if env.spill is not None and type(node) in _SPILLING:
        # enable_spill: the operator runs as a stream that may spill (executor/spill/)
        from executor.spill.hold import concat
        from executor.stream import stream
        return check_memory(concat(list(stream(node, env))), env)
    return execute_in_memory(node, env)


def execute_in_memory(node: object, env: ExecEnv) -> pa.Table:
    """The node run over its whole (materialised) input."""
    if env.profile is None:
        return check_memory(_HANDLERS[type(node)](node, env), env)
    start = time.perf_counter()
    table = check_memory(_HANDLERS[type(node)](node, env), env)
    env.record(node, table.num_rows, time.perf_counter() - start,
               nbytes=getattr(table, "nbytes", 0))
    return table


def check_memory(table, env: ExecEnv):
    """exec_mem_limit: a materialised intermediate result larger than the limit fails the query
    (a clear error instead of the process running out of memory). A KILLed query stops here.
    `table`: a pa.Table or anything else with `nbytes` (an aggregate's AggInput)."""
    env.check_cancelled()
    # the buffers' total size (each shared buffer once) is O(buffers); the exact nbytes of
    # sliced arrays only when that bound passes the limit
    total = getattr(table, "get_total_buffer_size", None)  # (Arrow tables have it)
    size = total() if total is not None else table.nbytes
    if size >= PROCESS_CHECK_BYTES:
        _check_process_memory(env)
    if env.mem_limit and size > env.mem_limit and table.nbytes > env.mem_limit:
        raise ExecutionError(
            f"[MEM_LIMIT_EXCEEDED]Query memory usage {table.nbytes} bytes exceeds "
            f"exec_mem_limit {env.mem_limit} bytes; raise it with SET exec_mem_limit = ...")
    return table


# Batches and intermediates at least this large check the process's mem_limit: a query that
# holds little is not what fills the memory, and goes on (as Doris cancels the large ones).
PROCESS_CHECK_BYTES = 1 << 20


def _check_process_memory(env: ExecEnv) -> None:
    """mem_limit, for queries: over it, the page cache is dropped and freed memory returned;
    still over it, the query fails with Doris's MEM_LIMIT_EXCEEDED (the server goes on)."""
    message = over_limit(env.engine, recently=True)
    if message is not None:
        raise ExecutionError(f"[MEM_LIMIT_EXCEEDED]{message}")


def _aggregate(node: L.Aggregate, env: ExecEnv) -> pa.Table:
    """The arguments' Project below an Aggregate (planner/aggregation.py) is evaluated here, so
    that DECIMAL arguments reach the aggregation as int64 (`AggInput`, decimal_int64.py)."""
    result = run_scan_aggregate(node, env, check_memory)
    if result is not None:
        return result
    source = node.input
    if not isinstance(source, L.Project):
        return run_aggregate(execute(source, env), node.group_names, node.calls,
                             node.grouping_sets)
    table = execute(source.input, env)
    start = time.perf_counter()
    inp = check_memory(project_for_aggregate(table, source.exprs, source.names, env.eval_ctx), env)
    env.record(source, inp.num_rows, time.perf_counter() - start)
    return run_aggregate(inp, node.group_names, node.calls, node.grouping_sets)


def _scalar_subquery(node: L.ScalarSubquery, env: ExecEnv) -> pa.Table:
    table = execute(node.input, env)
    if table.num_rows > 1:
        raise ExecutionError("Expected EQ 1 to be returned by expression: subquery returned "
                                  f"{table.num_rows} rows")
    if table.num_rows == 0:
        return pa.Table.from_arrays([pa.nulls(1, f.type) for f in table.schema], names=table.column_names)
    return table


def _extend(table: pa.Table, node: L.Extend, env: ExecEnv) -> pa.Table:
    extra = run_project(table, node.exprs, node.names, env.eval_ctx)
    for name in node.names:
        table = table.append_column(name, extra.column(name))
    return table


def _rename(node: L.Rename, env: ExecEnv) -> pa.Table:
    table = execute(node.input, env)
    return pa.Table.from_arrays([table.column(n) for n in node.names], names=node.aliases)


_SPILLING = (L.Aggregate, L.Join, L.Sort)  # executor/stream.py streams them under enable_spill

_HANDLERS: dict[type, Callable[[object, ExecEnv], pa.Table]] = {
    L.OlapScan: run_scan,
    L.InlineTable: lambda n, env: n.table,
    L.OneRow: lambda n, env: pa.table({"__one": pa.nulls(1, pa.bool_())}),
    L.Filter: lambda n, env: execute(n.input, env) if n.pushed else
    run_filter(execute(n.input, env), n.condition, env.eval_ctx, env.pool),
    L.Project: lambda n, env: run_project(execute(n.input, env), n.exprs, n.names, env.eval_ctx),
    L.Aggregate: _aggregate,
    L.Join: lambda n, env: run_distributed_join(n, env),
    L.Sort: lambda n, env: run_sort(execute(n.input, env), n.keys, n.limit),
    L.Limit: lambda n, env: run_limit(execute(n.input, env), n.limit, n.offset),
    L.Distinct: lambda n, env: run_distinct(execute(n.input, env)),
    L.Rename: _rename,
    L.Window: lambda n, env: run_window(execute(n.input, env), n.calls),
    L.Extend: lambda n, env: _extend(execute(n.input, env), n, env),
    L.TableFunction: lambda n, env: run_table_function(execute(n.input, env), n, env.eval_ctx),
    L.ScalarSubquery: _scalar_subquery,
    L.SetOp: lambda n, env: run_set_op(execute(n.left, env), execute(n.right, env), n.kind, n.distinct),
}
