"""Cluster statements: ALTER SYSTEM ... BACKEND, CANCEL DECOMMISSION BACKEND, SHOW BACKENDS and
SHOW PROC: '/backends', '/colocation_group[/<GroupId>]' here, the rest of the tree in
proc_dirs.py."""

from __future__ import annotations

import time

from catalog import backend as be
from catalog import colocation as co
from catalog.errors import AnalysisError
from catalog.statements import AlterSystemStmt, ShowBackendsStmt, ShowProcStmt
from server.handlers import proc_dirs, proc_jobs
from server.handlers.context import StatementContext
from server.results import OkResult, RowsResult, text_columns
from server.variables import DORIS_VERSION

_GROUP_COLUMNS = ["GroupId", "GroupName", "TableIds", "BucketsNum", "ReplicationNum", "DistCols",
                  "IsStable", "ErrorMsg"]


def alter_system(stmt: AlterSystemStmt, ctx: StatementContext) -> OkResult:
    cat = ctx.catalog
    actions = {
        "ADD": cat.add_backends,
        "DECOMMISSION": cat.decommission_backends,
        "CANCEL_DECOMMISSION": cat.cancel_decommission,
        "DROP": lambda hps: cat.drop_backends(hps, force=False),
        "DROPP": lambda hps: cat.drop_backends(hps, force=True),
    }
    actions[stmt.action](stmt.host_ports)
    return OkResult()


def _backends(ctx: StatementContext) -> RowsResult:
    with ctx.catalog.lock:
        rows = be.show_rows(ctx.catalog, str(ctx.engine.root_dir), DORIS_VERSION, time.time())
    return text_columns(be.SHOW_COLUMNS, rows)


def show_backends(stmt: ShowBackendsStmt, ctx: StatementContext) -> RowsResult:
    return _backends(ctx)


def _colocation_groups(ctx: StatementContext) -> RowsResult:
    with ctx.catalog.lock:
        rows = co.info_rows(ctx.catalog)
    return text_columns(_GROUP_COLUMNS, rows)


def _colocation_group(ctx: StatementContext, group_id: str) -> RowsResult:
    parts = group_id.split(".")
    if len(parts) != 2 or not all(p.strip().lstrip("-").isdigit() for p in parts):
        raise AnalysisError(f"Invalid group id: {group_id}")
    with ctx.catalog.lock:
        g = ctx.catalog.colocation.groups.get(f"{int(parts[0])}.{int(parts[1])}")
        seq = [] if g is None else [list(b) for b in g.seq]
    return text_columns(["BucketIndex", "BackendIds"],
                        [(i, ", ".join(str(b) for b in bucket)) for i, bucket in enumerate(seq)])


def show_proc(stmt: ShowProcStmt, ctx: StatementContext) -> RowsResult:
    path = stmt.path.strip()
    if not path.startswith("/"):
        raise AnalysisError(f"Path({stmt.path}) does not start with '/'")
    names = [n for n in path.split("/") if n]
    if not names:
        return proc_dirs.root()
    if names == ["dbs"]:
        return proc_dirs.dbs(ctx)
    if len(names) == 2 and names[0] == "dbs":
        return proc_dirs.tables(ctx, names[1])
    if len(names) > 2 and names[0] == "dbs":
        return proc_dirs.table_dir(ctx, names)
    if names in (["jobs"], ["transactions"]):
        return proc_jobs.dbs(ctx)
    if len(names) == 2 and names[0] == "jobs":
        return proc_jobs.jobs(ctx, names[1])
    if len(names) > 1 and names[0] == "transactions":
        return proc_jobs.transactions(ctx, names)
    if names == ["statistic"]:
        return proc_dirs.statistic(ctx)
    if names == ["current_queries"]:
        return proc_dirs.current_queries(ctx)
    if names == ["frontends"]:
        from server.handlers.show import show_command
        return show_command("FRONTENDS", ctx)
    if names == ["backends"]:
        return _backends(ctx)
    if names == ["colocation_group"]:
        return _colocation_groups(ctx)
    if len(names) == 2 and names[0] == "colocation_group":
        return _colocation_group(ctx, names[1])
    raise AnalysisError(f"Proc path '{stmt.path}' doesn't exist")
