"""SHOW and DESC handlers: DATABASES, TABLES, TABLE STATUS, VARIABLES, WARNINGS, CREATE TABLE,
PARTITIONS, [FULL] COLUMNS (tables, views, information_schema), PROCESSLIST, the empty
PROCEDURE / FUNCTION STATUS, TRIGGERS, EVENTS, OPEN TABLES and PLUGINS, and DESC t [ALL], with
Doris's columns. WHERE / ORDER BY / LIMIT after them: show_filter.py."""

from __future__ import annotations

import re
import time
from datetime import datetime

from sqlglot import exp

from catalog import information_schema
from catalog.access import visible_db, visible_tbl
from catalog.auth import PRIVILEGE_INFO, PRIVILEGES
from catalog.errors import NotSupported, SyntaxError_, UnknownTable
from catalog.system_dbs import SYSTEM_DBS, system_db
from catalog.partitions import (format_list, format_range, partition_types,
                                partitions_in_order)
from catalog.statements import DescFunctionStmt, DescStmt, ShowCreateTableStmt, ShowPartitionsStmt
from catalog.unique_model import is_merge_on_write
from server.handlers import show_filter
from server.handlers.context import StatementContext
from server.handlers.query import describe_query, view_columns
from server.handlers.show_create import show_create_table_sql
from server.handlers.show_data import show_data, show_tablets
from server.results import ResultColumn, RowsResult, rows_from_python, text_columns
from storage.types import DataType


def like_filter(pattern: str | None):
    if not pattern:
        return lambda s: True
    regex = "".join(".*" if ch == "%" else "." if ch == "_" else re.escape(ch) for ch in pattern)
    compiled = re.compile(f"^{regex}$", re.IGNORECASE | re.DOTALL)
    return lambda s: bool(compiled.match(s))


def _like(stmt: exp.Show) -> str | None:
    like = stmt.args.get("like")
    return like.name if like is not None else None


def show(stmt: exp.Show, ctx: StatementContext) -> RowsResult:
    kind = stmt.name.upper()
    handler = _SHOW.get(kind)
    if handler is None:
        raise NotSupported(f"SHOW {kind} is not supported yet")
    return show_filter.apply(handler(stmt, ctx), show_filter.tail_of(stmt))  # WHERE, LIMIT


def _databases(stmt: exp.Show, ctx: StatementContext) -> RowsResult:
    keep = like_filter(_like(stmt))
    with ctx.catalog.lock:
        names = sorted([*SYSTEM_DBS, *ctx.catalog.dbs])
    return text_columns(["Database"], [(n,) for n in names if keep(n) and visible_db(n)])


def _tables(stmt: exp.Show, ctx: StatementContext) -> RowsResult:
    db_name = stmt.text("db") or ctx.db
    keep = like_filter(_like(stmt))
    views: set[str] = set()
    sysdb = system_db(db_name)
    if sysdb is not None:
        db_name, names = sysdb.NAME, [n for n in sysdb.table_names() if keep(n)]
    else:
        with ctx.catalog.lock:
            db = ctx.catalog.get_db(db_name)
            db_name, names = db.name, sorted(n for n in [*db.tables, *db.views]
                                             if keep(n) and visible_tbl(db.name, n))
            views = set(db.views)
    header = f"Tables_in_{db_name}"
    if stmt.args.get("full"):
        return text_columns([header, "Table_type"], [
            (n, "SYSTEM VIEW" if sysdb else "VIEW" if n in views else "BASE TABLE") for n in names])
    return text_columns([header], [(n,) for n in names])


def _variables(stmt: exp.Show, ctx: StatementContext) -> RowsResult:
    """Doris's four columns: Variable_name, Value, Default_Value, Changed (1 when the value
    differs from the default); GLOBAL shows the global values."""
    keep = like_filter(_like(stmt))
    session = ctx.session.variables
    variables = session.global_variables if stmt.args.get("global_") else session
    rows = []
    for k, v in variables.list():
        if keep(k):
            default = session.default(k)
            rows.append((k, "" if v is None else _var_text(v),
                         "" if default is None else _var_text(default), int(v != default)))
    return text_columns(["Variable_name", "Value", "Default_Value", "Changed"], rows)


def _var_text(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _warnings(stmt: exp.Show, ctx: StatementContext) -> RowsResult:
    return text_columns(["Level", "Code", "Message"], [])


def _processlist(stmt: exp.Show, ctx: StatementContext) -> RowsResult:
    """Every open connection: its user, host, database and what it runs now (Doris's columns)."""
    cols = ["CurrentConnected", "Id", "User", "Host", "LoginTime", "Catalog", "Db", "Command",
            "Time", "State", "QueryId", "Info"]
    sessions = dict(getattr(ctx.session.services, "sessions", {}) or {ctx.session.connection_id: ctx.session})
    now = time.time()
    rows = []
    me = getattr(ctx.session, "access", None)
    if me is not None and not me.check_global("ADMIN"):  # as Doris: only one's own
        sessions = {c: s for c, s in sessions.items()
                    if getattr(getattr(s, "access", None), "name", None) == me.name}
    for cid, s in sorted(sessions.items()):
        sql = ctx.sql if s is ctx.session else s.current_sql
        busy = bool(sql)
        info = sql if stmt.args.get("full") else sql[:100]
        rows.append(("Yes" if s is ctx.session else "No", cid, s.username or "root", s.host,
                     s.login_time.strftime("%Y-%m-%d %H:%M:%S"), "internal", s.database or "",
                     "Query" if busy else "Sleep",
                     int(now - s.statement_started) if busy and s.statement_started else 0,
                     "OK" if busy else "", "", info))
    return text_columns(cols, rows)


def _plain_columns(db_name: str | None, name: str, ctx: StatementContext) -> list | None:
    """The columns (ResultColumn) of a view, its query's, or of an information_schema / mysql
    table (Doris's types): no keys, defaults or aggregation; None for a table of the catalog."""
    sysdb = system_db(db_name)
    if sysdb is not None:
        columns = sysdb.columns_of(name)
        if columns is None:
            raise UnknownTable(name, sysdb.NAME)
        return [ResultColumn(c, t) for c, t in columns]
    with ctx.catalog.lock:
        db = ctx.catalog.get_db(db_name)
        view = db.views.get(name)
    if view is None:
        return None
    return view_columns(db.name, view, ctx)  # outside the lock: binding the query takes it


def _columns(stmt: exp.Show, ctx: StatementContext) -> RowsResult:
    """SHOW [FULL] COLUMNS FROM t: as Doris (ShowColumn), the type in lower case with its V2/V3
    name, YES/NO for Null and Key, the aggregation type as Extra (NONE for the value columns
    of Duplicate and merge-on-write Unique tables); FULL adds Collation, Privileges and
    Comment. A view's columns are its query's. LIKE filters the fields."""
    keep = like_filter(_like(stmt))
    full = bool(stmt.args.get("full"))
    db_name, name = stmt.text("db") or ctx.db, stmt.text("target")
    plain = _plain_columns(db_name, name, ctx)
    if plain is not None:
        fields = [(c.name, c.type, c.nullable, False, None, "", "") for c in plain]
    else:
        with ctx.catalog.lock:
            table = ctx.catalog.get_table(db_name, name)
            fields = [(c.name, c.type, c.nullable, c.is_key, c.default,
                       _desc_row(table, None, c)[5], c.comment or "")
                      for c in table.columns + _shown_hidden(table, None, ctx)]
    rows = []
    for field, dtype, nullable, is_key, default, extra, comment in fields:
        if not keep(field):
            continue
        null, key = ("YES" if nullable else "NO"), ("YES" if is_key else "NO")
        if full:
            rows.append((field, dtype.show_columns_sql(), "", null, key, default, extra, "",
                         comment))
        else:
            rows.append((field, dtype.show_columns_sql(), null, key, default, extra))
    if full:
        return text_columns(["Field", "Type", "Collation", "Null", "Key", "Default", "Extra",
                             "Privileges", "Comment"], rows)
    return text_columns(["Field", "Type", "Null", "Key", "Default", "Extra"], rows)


_BIGINT, _DATETIME = DataType("BIGINT"), DataType("DATETIME")
_TABLE_STATUS = (("Name", DataType("VARCHAR", 64)), ("Engine", DataType("VARCHAR", 10)),
                 ("Version", _BIGINT), ("Row_format", DataType("VARCHAR", 64)),
                 ("Rows", _BIGINT), ("Avg_row_length", _BIGINT), ("Data_length", _BIGINT),
                 ("Max_data_length", _BIGINT), ("Index_length", _BIGINT),
                 ("Data_free", _BIGINT), ("Auto_increment", _BIGINT),
                 ("Create_time", _DATETIME), ("Update_time", _DATETIME),
                 ("Check_time", _DATETIME), ("Collation", DataType("VARCHAR", 64)),
                 ("Checksum", _BIGINT), ("Create_options", DataType("VARCHAR", 64)),
                 ("Comment", DataType("VARCHAR", 64)))


def _table_status(stmt: exp.Show, ctx: StatementContext) -> RowsResult:
    """SHOW TABLE STATUS [FROM db] [LIKE p | WHERE e]: Doris's columns and types, a row per
    table and view sorted by name (information_schema.table_status: rows, bytes, times,
    collation `utf-8`); what Doris leaves NULL is NULL."""
    keep = like_filter(_like(stmt))
    rows = []
    db_name = stmt.text("db") or ctx.db
    with ctx.catalog.lock:
        sysdb = system_db(db_name)
        if sysdb is not None:  # its system views
            db_name, objects = sysdb.NAME, [
                (n, information_schema.system_view_status()) for n in sysdb.table_names()]
        else:
            db = ctx.catalog.get_db(db_name)
            db_name = db.name
            objects = [(t.name, information_schema.table_status(t)) for t in db.tables.values()]
            objects += [(v["name"], information_schema.view_status(v)) for v in db.views.values()]
        for name, st in sorted(objects):
            if keep(name) and visible_tbl(db_name, name):
                rows.append((name, st["ENGINE"], None, None, st["TABLE_ROWS"],
                             st["AVG_ROW_LENGTH"], st["DATA_LENGTH"], None, None, None, None,
                             st["CREATE_TIME"], st["UPDATE_TIME"], None, st["TABLE_COLLATION"],
                             None, None, st["TABLE_COMMENT"]))
    return rows_from_python([n for n, _ in _TABLE_STATUS], [t for _, t in _TABLE_STATUS], rows)


def _engines(stmt: exp.Show, ctx: StatementContext) -> RowsResult:
    return text_columns(["Engine", "Support", "Comment", "Transactions", "XA", "Savepoints"],
                        [("Olap engine", "DEFAULT", "Default storage engine of palo", "YES", "NO", "NO"),
                         ("MySQL", "YES", "MySQL server which data is in it", "NO", "NO", "NO")])


def _charsets(stmt: exp.Show, ctx: StatementContext) -> RowsResult:
    return text_columns(["Charset", "Description", "Default collation", "Maxlen"],
                        [("utf8mb4", "UTF-8 Unicode", "utf8mb4_0900_bin", 4)])


def _collations(stmt: exp.Show, ctx: StatementContext) -> RowsResult:
    return text_columns(["Collation", "Charset", "Id", "Default", "Compiled", "Sortlen"],
                        [("utf8mb4_0900_bin", "utf8mb4", 309, "Yes", "Yes", 1)])


def _create_database(stmt: exp.Show, ctx: StatementContext) -> RowsResult:
    name = stmt.text("target")
    with ctx.catalog.lock:
        db = ctx.catalog.get_db(name)
    return text_columns(["Database", "Create Database"], [(db.name, f"CREATE DATABASE `{db.name}`")])


def _grants(stmt: exp.Show, ctx: StatementContext) -> RowsResult:
    return text_columns(["UserIdentity", "Comment", "Password", "Roles", "GlobalPrivs",
                         "CatalogPrivs", "DatabasePrivs", "TablePrivs", "ColPrivs",
                         "ResourcePrivs", "CloudClusterPrivs", "WorkloadGroupPrivs"],
                        [("'root'@'%'", "ROOT", "No", "operator", "Node_priv,Admin_priv", None,
                          None, None, None, None, None, "normal: Usage_priv")])


def _create_materialized_view(words: list[str], ctx: StatementContext) -> RowsResult:
    """SHOW CREATE MATERIALIZED VIEW mv ON [db.]t (ShowCreateMaterializedViewStmt): the
    statement that created the table's synchronous materialized view; no row for a name that
    is not one of its materialized views."""
    if len(words) != 3 or words[1].upper() != "ON":
        raise SyntaxError_("SHOW CREATE MATERIALIZED VIEW needs: mv_name ON table_name")
    mv = words[0].strip("`")
    db, _, name = words[2].strip(";").rpartition(".")
    with ctx.catalog.lock:
        table = ctx.catalog.get_table(db.strip("`") or ctx.db, name.strip("`"))
        rows = [(table.name, index.name, _mv_statement(index)) for index in table.rollups()
                if index.name == mv and index.define_sql]
    return text_columns(["TableName", "ViewName", "CreateStmt"], rows)


def _mv_statement(index) -> str:
    text = index.define_sql.strip()
    if text.upper().startswith("CREATE"):
        return text
    return f"CREATE MATERIALIZED VIEW {index.name} AS {text}"


def show_command(text: str, ctx: StatementContext) -> RowsResult | None:
    """SHOW statements sqlglot leaves raw (exp.Command; `text` follows SHOW); None when not
    one of them."""
    words = text.split()
    key = " ".join(w.upper() for w in words[:1])
    if [w.upper() for w in words[:3]] == ["CREATE", "MATERIALIZED", "VIEW"]:
        return _create_materialized_view(words[3:], ctx)
    if key == "DATA":
        return show_data(text.strip()[len(words[0]):], ctx)
    if key == "TABLETS":
        return show_tablets(text.strip()[len(words[0]):], ctx)
    if key == "CATALOGS":
        return text_columns(["CatalogId", "CatalogName", "Type", "IsCurrent", "CreateTime",
                             "LastUpdateTime", "Comment"],
                            [(0, "internal", "internal", "Yes", "UNRECORDED", None,
                              "Doris internal catalog")])
    if key == "FRONTENDS":
        config = ctx.session.services.config  # the ports this server listens on
        return text_columns(["Name", "Host", "EditLogPort", "HttpPort", "QueryPort", "RpcPort",
                             "ArrowFlightSqlPort", "Role", "IsMaster", "ClusterId", "Join",
                             "Alive", "ReplayedJournalId", "LastStartTime", "LastHeartbeat",
                             "IsHelper", "ErrMsg", "Version", "CurrentConnected"],
                            [("fe_minidoris", "127.0.0.1", 9010, config.http_port, config.query_port,
                              9020, config.arrow_flight_sql_port, "FOLLOWER",
                              "true", 1, "true", "true", ctx.catalog.journal.seq, None, None,
                              "true", "", "doris-2.1.7-minidoris", "Yes")])
    return None


def _none_of(*columns: str):
    """A MySQL object kind Doris has none of (its SHOW answers these columns, no rows)."""
    return lambda stmt, ctx: text_columns(list(columns), [])


_COLLATIONS = ("character_set_client", "collation_connection", "Database Collation")
_SHOW = {
    # stored procedures, functions, triggers and events (ShowProcedureStmt, ShowTriggersStmt,
    # ShowEventsStmt): Doris keeps none; DBeaver-like tools list them when browsing a schema
    "PROCEDURE STATUS": _none_of("Db", "Name", "Type", "Definer", "Modified", "Created",
                                "Security_type", "Comment", *_COLLATIONS),
    "FUNCTION STATUS": _none_of("Db", "Name", "Type", "Definer", "Modified", "Created",
                               "Security_type", "Comment", *_COLLATIONS),
    "TRIGGERS": _none_of("Trigger", "Event", "Table", "Statement", "Timing", "Created",
                         "sql_mode", "Definer", *_COLLATIONS),
    # plugins (ShowPluginsStmt's columns): minidoris loads none (DBeaver's plugin panel)
    "PLUGINS": _none_of("Name", "Type", "Description", "Version", "JavaVersion", "ClassName",
                        "SoName", "Sources", "Status", "Properties"),
    # open tables (ShowOpenTableStmt): Doris lists none
    "OPEN TABLES": _none_of("Database", "Table", "In_use", "Name_locked"),
    "EVENTS": _none_of("Db", "Name", "Definer", "Time", "Type", "Execute at", "Interval value",
                       "Interval field", "Status", "Ends", "Status", "Originator", *_COLLATIONS),
    "TABLE STATUS": _table_status, "ENGINES": _engines, "CHARACTER SET": _charsets,
    "CHARSET": _charsets, "COLLATION": _collations, "CREATE DATABASE": _create_database,
    "GRANTS": _grants,
    "DATABASES": _databases, "SCHEMAS": _databases, "TABLES": _tables,
    "VARIABLES": _variables, "WARNINGS": _warnings, "ERRORS": _warnings,
    "PROCESSLIST": _processlist, "COLUMNS": _columns, "FIELDS": _columns,
    "STATUS": lambda s, c: text_columns(["Variable_name", "Value"], []),
    "PRIVILEGES": lambda s, c: text_columns(["Privilege", "Context", "Comment"], [
        (name, *PRIVILEGE_INFO[name]) for name in PRIVILEGES]),
}


def show_create_table(stmt: ShowCreateTableStmt, ctx: StatementContext) -> RowsResult:
    with ctx.catalog.lock:
        if stmt.table in ctx.catalog.get_db(stmt.db or ctx.db).views:  # as Doris: the view's DDL
            from server.handlers.views import show_create_view
            return show_create_view(stmt.db, stmt.table, ctx)
        table = ctx.catalog.get_table(stmt.db or ctx.db, stmt.table)
        text = show_create_table_sql(table)
    return text_columns(["Table", "Create Table"], [(table.name, text)])


def desc(stmt: DescStmt, ctx: StatementContext, full: bool = False) -> RowsResult:
    plain = _plain_columns(stmt.db or ctx.db, stmt.table, ctx)
    if plain is not None:  # a view or an information_schema table: none of them a key
        rows = [(c.name, c.type.desc_sql(), "Yes" if c.nullable else "No", "false", None, "")
                for c in plain]
        return text_columns(["Field", "Type", "Null", "Key", "Default", "Extra"], rows)
    with ctx.catalog.lock:
        table = ctx.catalog.get_table(stmt.db or ctx.db, stmt.table)
        indexes = [table.indexes[table.base_index_id], *table.rollups()] if stmt.all else \
            [table.indexes[table.base_index_id]]
        per_index = [(i, [_mv_named(_desc_row(table, i, c), i, c, table.keys_type)
                          for c in table.index_columns(i.index_id)
                          + _shown_hidden(table, i, ctx)]) for i in indexes]
    if stmt.all:  # base first, then each visible rollup, a blank row between (as Doris)
        rows: list[tuple] = []
        for n, (index, cols) in enumerate(per_index):
            if n:
                rows.append(("",) * 8)
            rows += [((index.name if i == 0 else ""), (index.keys_type if i == 0 else ""), *r)
                     for i, r in enumerate(cols)]
        return text_columns(["IndexName", "IndexKeysType", "Field", "Type", "Null", "Key",
                             "Default", "Extra"], rows)
    return text_columns(["Field", "Type", "Null", "Key", "Default", "Extra"], per_index[0][1])


def desc_function(stmt: DescFunctionStmt, ctx: StatementContext) -> RowsResult:
    """The columns of a table-valued function, as DESC prints a table's (none a key)."""
    rows = [(c.name, (c.type or DataType("STRING")).desc_sql(), "Yes", "false", None, "")
            for c in describe_query(stmt.query, ctx, ctx.db)]
    return text_columns(["Field", "Type", "Null", "Key", "Default", "Extra"], rows)


def _mv_named(row: tuple, index, column, keys_type: str) -> tuple:
    """A materialized view's column under the name Doris 2.x gives it (mv_ / mva_)."""
    from catalog.materialized_view import display_name
    return (display_name(index, column, keys_type), *row[1:]) if index.is_mv else row


def _shown_hidden(table, index, ctx: StatementContext) -> list:
    """The hidden columns (catalog/hidden_columns.py) DESC lists: all of a Unique table's
    indexes have them, shown only with `SET show_hidden_columns = true` (as Doris)."""
    if not ctx.session.variables.get("show_hidden_columns"):
        return []
    if index is not None and index.keys_type != "UNIQUE_KEYS":
        return []
    return list(table.hidden_columns)


def _desc_row(table, index, c) -> tuple:
    # Doris prints the aggregation type of every value column: NONE on Duplicate and
    # merge-on-write Unique tables (DescribeStmt / Column.getAggregationString).
    extra = "" if c.is_key else (c.aggregation or "NONE")
    if not c.is_key and is_merge_on_write(table):
        extra = "NONE"
    if c.auto_increment:  # "AUTO_INCREMENT" on a key, "NONE,AUTO_INCREMENT" on a value
        extra = f"{extra},AUTO_INCREMENT" if extra else "AUTO_INCREMENT"
    return (c.name, c.type.desc_sql(), "Yes" if c.nullable else "No",
            "true" if c.is_key else "false", c.default if c.default is not None else None, extra)


def show_partitions(stmt: ShowPartitionsStmt, ctx: StatementContext) -> RowsResult:
    tail = show_filter.parse_tail(stmt.tail)
    cols = ["PartitionId", "PartitionName", "VisibleVersion", "VisibleVersionTime", "State",
            "PartitionKey", "Range", "DistributionKey", "Buckets", "ReplicationNum",
            "StorageMedium", "CooldownTime", "RemoteStoragePolicy", "LastConsistencyCheckTime",
            "DataSize", "IsInMemory", "ReplicaAllocation", "IsMutable", "SyncWithBaseTables",
            "UnsyncTables"]
    with ctx.catalog.lock:
        table = ctx.catalog.get_table(stmt.db or ctx.db, stmt.table)
        info = table.partition_info
        types = partition_types(table) if info.kind != "UNPARTITIONED" else []
        dist = ", ".join(table.distribution.columns) or "RANDOM"
        rows = []
        parts = partitions_in_order(table)  # RANGE: by range, as Doris lists them
        if stmt.temporary:
            parts = sorted(table.temp_partitions.values(), key=lambda p: p.partition_id)
        for p in parts:
            if info.kind == "RANGE":
                rng = format_range(types, p.lower, p.upper)
            elif info.kind == "LIST":
                rng = format_list(types, p.values or [])
            else:
                rng = ""
            size = sum(meta.data_size() for meta in p.tablets.values())  # as SHOW TABLETS
            rows.append((p.partition_id, p.name, p.visible_version,
                         datetime.fromtimestamp(p.visible_version_time).strftime("%Y-%m-%d %H:%M:%S"),
                         "NORMAL", ", ".join(info.columns), rng, dist, p.buckets,
                         p.replication_num, p.properties.get("storage_medium", "HDD"),
                         p.properties.get("storage_cooldown_time", "9999-12-31 23:59:59"), "",
                         "NULL",
                         _size_text(size), "false", f"tag.location.default: {p.replication_num}",
                         "true", "true", "NULL"))
    return show_filter.apply(text_columns(cols, rows), tail)


def _size_text(n: int) -> str:
    for unit, factor in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= factor:
            return f"{n / factor:.3f} {unit}"
    return f"{n}.000 "
