"""Asynchronous materialized views (Doris's MTMV): the record kept on the view's OlapTable.

An async materialized view is an OLAP table (`OlapTable.mtmv` is not None) whose rows a
refresh task computes from its query; the query, the refresh rules, its job, its last
refresh and a bounded history of tasks live in `OlapTable.mtmv`:

    query, db               the AS query's text, the database it is resolved in
    build_mode              IMMEDIATE / DEFERRED
    refresh_method          COMPLETE / AUTO / NEVER
    trigger                 {kind: MANUAL | SCHEDULE | COMMIT, interval, unit, starts}
    properties              the view's own properties (grace_period, ...: MvProperties)
    job_id, job_name, job_status, job_create_time    its refresh job (RUNNING / PAUSED)
    refresh_state           INIT / SUCCESS / FAIL (the last task's outcome)
    base_tables             [{db, table, table_id}] the tables the query reads
    snapshot                {table_id: {partition_id: visible version}} the base tables'
                            versions the contents were computed from (None: never refreshed)
    last_refresh_time       when the contents were last replaced (epoch seconds)
    tasks                   the last MAX_TASKS tasks, oldest first

Every change is one journal entry `mtmv_set` {db, table, set: {field: value}, next_id}
(applied by `_apply_set`); the table itself is created, renamed and dropped by the ordinary
table operations, its record travelling in the table's entry. Freshness (`is_sync`) compares
`snapshot` with the base tables' visible versions now: the contents are what the query would
return exactly when no base table was loaded, deleted from, or replaced since.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import TYPE_CHECKING

from catalog.errors import AnalysisError, DdlError, UnknownTable
from catalog.model import OlapTable

if TYPE_CHECKING:
    from catalog.catalog import Catalog

MAX_TASKS = 20  # tasks kept per view (Doris keeps max_persistence_task_count = 100 in all)
# Doris's MTMV property names (PropertyAnalyzer / MTMVPropertyUtil): kept in MvProperties
MV_PROPERTIES = ("grace_period", "excluded_trigger_tables", "refresh_partition_num",
                 "workload_group", "partition_sync_limit", "partition_sync_time_unit",
                 "partition_date_format", "enable_nondeterministic_function",
                 "use_for_rewrite", "query_rewrite_consistency")
NOT_ALLOWED = "Not allowed to perform current operation on async materialized view"


def is_mtmv(table: object) -> bool:
    return isinstance(table, OlapTable) and table.mtmv is not None


def get_mtmv(cat: Catalog, db_name: str | None, name: str) -> tuple[str, OlapTable]:
    """(database name, the view's table); the caller holds the catalog lock. Doris's
    getTableOrMetaException(name, MATERIALIZED_VIEW) messages."""
    db = cat.get_db(db_name)
    table = db.tables.get(name)
    if table is None:
        if name in db.views:
            raise DdlError(f"table type is not MATERIALIZED_VIEW, tableName={name}, type=VIEW")
        raise UnknownTable(name, db.name)
    if not is_mtmv(table):
        raise DdlError(f"table type is not MATERIALIZED_VIEW, tableName={name}, type=OLAP")
    return db.name, table


def check_writable(cat: Catalog, db_name: str | None, name: str) -> None:
    """INSERT / DELETE / UPDATE / loads into an async materialized view are refused
    (Doris: only its own refresh task writes it)."""
    with cat.lock:
        db = cat.dbs.get(db_name or "")
        table = db.tables.get(name) if db is not None else None
        if is_mtmv(table):
            raise AnalysisError(NOT_ALLOWED)


def set_fields(cat: Catalog, db: str, table_name: str, fields: dict) -> None:
    """Journal and apply a change of the view's record."""
    with cat.lock:
        cat._log("mtmv_set", {"db": db, "table": table_name, "set": fields,  # noqa: SLF001
                              "next_id": cat.next_id})


def _apply_set(cat: Catalog, data: dict) -> None:
    table = cat.dbs[data["db"]].tables[data["table"]]
    table.mtmv = {**(table.mtmv or {}), **data["set"]}
    cat.next_id = max(cat.next_id, data.get("next_id", 0))


APPLY = {"mtmv_set": _apply_set}


# -- freshness -----------------------------------------------------------------------------
def snapshot(cat: Catalog, base_tables: list[dict]) -> dict[str, dict[str, int]]:
    """The base tables' partitions' visible versions now (caller holds the catalog lock)."""
    out: dict[str, dict[str, int]] = {}
    for b in base_tables:
        table = _base_table(cat, b)
        if table is not None:
            out[str(b["table_id"])] = {str(p.partition_id): p.visible_version
                                       for p in table.partitions.values()}
    return out


def _base_table(cat: Catalog, base: dict) -> OlapTable | None:
    for db in cat.dbs.values():
        for t in db.tables.values():
            if t.table_id == base["table_id"]:
                return t
    return None


def missing_base_tables(cat: Catalog, rec: dict) -> list[str]:
    return [f"{b['db']}.{b['table']}" for b in rec.get("base_tables", [])
            if _base_table(cat, b) is None]


def is_sync(cat: Catalog, table: OlapTable) -> bool:
    """Are the view's contents what its query returns now? (caller holds the catalog lock)"""
    rec = table.mtmv
    if rec is None or rec.get("snapshot") is None or missing_base_tables(cat, rec):
        return False
    return rec["snapshot"] == snapshot(cat, rec.get("base_tables", []))


def usable_for_rewrite(cat: Catalog, table: OlapTable, now: float | None = None) -> bool:
    """Fresh, or refreshed within its grace_period (seconds: Doris's MTMVRewriteUtil lets a
    view whose data is at most that old answer queries)."""
    rec = table.mtmv or {}
    if rec.get("properties", {}).get("use_for_rewrite", "true").lower() == "false":
        return False
    if rec.get("snapshot") is None or missing_base_tables(cat, rec):
        return False
    if is_sync(cat, table):
        return True
    grace = int(rec.get("properties", {}).get("grace_period", "0") or 0)
    now = time.time() if now is None else now
    return grace > 0 and now - rec.get("last_refresh_time", 0) <= grace


# -- texts ---------------------------------------------------------------------------------
def time_text(seconds: float | None) -> str:
    return datetime.fromtimestamp(seconds).strftime("%Y-%m-%d %H:%M:%S") if seconds else ""


def trigger_text(trigger: dict) -> str:
    """MTMVRefreshTriggerInfo.toString: ON MANUAL | ON COMMIT | ON SCHEDULE EVERY n UNIT
    [STARTS "ts"]."""
    if trigger["kind"] != "SCHEDULE":
        return f"ON {trigger['kind']}"
    text = f"ON SCHEDULE EVERY {trigger['interval']} {trigger['unit']}"
    return text + (f' STARTS "{trigger["starts"]}"' if trigger.get("starts") else "")


def refresh_info(rec: dict) -> str:
    """MTMVRefreshInfo.toString (mv_infos' RefreshInfo)."""
    return (f"BUILD {rec['build_mode']} REFRESH {rec['refresh_method']} "
            f"{trigger_text(rec['trigger'])}")


def properties_text(props: dict) -> str:
    """A Java map's toString, as mv_infos prints MvProperties."""
    return "{" + ", ".join(f"{k}={v}" for k, v in props.items()) + "}"


def recurring_strategy(rec: dict) -> str:
    """jobs("type"="mv")'s RecurringStrategy (JobExecutionConfiguration)."""
    t = rec["trigger"]
    if t["kind"] == "SCHEDULE":
        text = f"EVERY {t['interval']} {t['unit']}"
        return text + (f" STARTS {t['starts']}" if t.get("starts") else "")
    return "MANUAL TRIGGER" if t["kind"] == "MANUAL" else "EVENT TRIGGER"


def execute_type(rec: dict) -> str:
    return {"MANUAL": "MANUAL", "SCHEDULE": "RECURRING", "COMMIT": "STREAMING"}[
        rec["trigger"]["kind"]]


# -- metadata table functions ----------------------------------------------------------------
MV_INFOS_COLUMNS = ["Id", "Name", "JobName", "State", "SchemaChangeDetail", "RefreshState",
                    "RefreshInfo", "QuerySql", "EnvInfo", "MvProperties", "MvPartitionInfo",
                    "SyncWithBaseTables"]
JOBS_COLUMNS = ["Id", "Name", "MvId", "MvName", "MvDatabaseId", "MvDatabaseName",
                "ExecuteType", "RecurringStrategy", "Status", "CreateTime"]
TASKS_COLUMNS = ["TaskId", "JobId", "JobName", "MvId", "MvName", "MvDatabaseId",
                 "MvDatabaseName", "Status", "ErrorMsg", "CreateTime", "StartTime",
                 "FinishTime", "DurationMs", "TaskContext", "RefreshMode",
                 "NeedRefreshPartitions", "CompletedPartitions", "Progress", "LastQueryId"]


_views_seen: list = [-1, []]  # (ddl_epoch, every view): tables change only with ddl_epoch


def views(cat: Catalog, db_name: str | None = None) -> list[tuple]:
    """(database, table) of every async view (of one database); caller holds the lock. The
    list of all views is kept while Catalog.ddl_epoch holds (every query asks for it)."""
    if _views_seen[0] != (id(cat), cat.ddl_epoch):
        _views_seen[:] = [(id(cat), cat.ddl_epoch),
                          [(db, t) for db in cat.dbs.values() for t in db.tables.values()
                           if is_mtmv(t)]]
    return [(db, t) for db, t in _views_seen[1] if db_name is None or db.name == db_name]


def mv_infos_rows(cat: Catalog, db_name: str) -> list[tuple]:
    rows = []
    with cat.lock:
        db = cat.get_db(db_name)
        for _, t in views(cat, db.name):
            rec = t.mtmv
            missing = missing_base_tables(cat, rec)
            state = "SCHEMA_CHANGE" if missing else "NORMAL"
            detail = f"base table dropped: {', '.join(missing)}" if missing else ""
            rows.append((t.table_id, t.name, rec["job_name"], state, detail,
                         rec["refresh_state"], refresh_info(rec), rec["query"],
                         f"EnvInfo{{ctlId='0', dbId='{db.db_id}'}}",
                         properties_text(rec.get("properties", {})),
                         "MTMVPartitionInfo{partitionType=SELF_MANAGE, relatedTable=null, "
                         "relatedCol='null', partitionCol='null'}",
                         is_sync(cat, t)))
    return rows


def jobs_rows(cat: Catalog) -> list[tuple]:
    with cat.lock:
        return [(str(t.mtmv["job_id"]), t.mtmv["job_name"], str(t.table_id), t.name,
                 str(db.db_id), db.name, execute_type(t.mtmv), recurring_strategy(t.mtmv),
                 t.mtmv["job_status"], time_text(t.mtmv["job_create_time"]))
                for db, t in views(cat)]


def tasks_rows(cat: Catalog) -> list[tuple]:
    rows = []
    with cat.lock:
        for db, t in views(cat):
            rec = t.mtmv
            for task in rec.get("tasks", []):
                duration = "" if not task.get("finish") else \
                    str(int((task["finish"] - task["start"]) * 1000))
                rows.append((str(task["id"]), str(rec["job_id"]), rec["job_name"],
                             str(t.table_id), t.name, str(db.db_id), db.name, task["status"],
                             task.get("error", ""), time_text(task["create"]),
                             time_text(task.get("start")), time_text(task.get("finish")),
                             duration, task["context"], task.get("mode", ""),
                             task.get("need", "[]"), task.get("completed", "[]"),
                             task.get("progress", ""), task.get("query_id", "")))
    return rows


def base_tables_of(cat: Catalog, db_name: str, query) -> list[dict]:
    """The OLAP tables a query (a sqlglot tree) reads, through views too: [{db, table,
    table_id}] in order of appearance (caller holds the catalog lock)."""
    import sqlglot
    from sqlglot import exp

    out: list[dict] = []
    ctes = {c.alias_or_name.lower() for c in query.find_all(exp.CTE)}
    for node in query.find_all(exp.Table):
        if not isinstance(node.this, exp.Identifier):
            continue  # a table-valued function
        if not node.args.get("db") and node.name.lower() in ctes:
            continue
        db = cat.dbs.get(node.db or db_name)
        if db is None:
            continue
        if node.name in db.views:
            view_sql = db.views[node.name]["sql"]
            for b in base_tables_of(cat, db.name, sqlglot.parse_one(view_sql, read="doris")):
                if b not in out:
                    out.append(b)
            continue
        table = db.tables.get(node.name)
        if table is not None:
            entry = {"db": db.name, "table": table.name, "table_id": table.table_id}
            if entry not in out:
                out.append(entry)
    return out
