"""CREATE MATERIALIZED VIEW (Doris's synchronous materialized view): an index built like a rollup.

    CREATE MATERIALIZED VIEW mv AS
      SELECT k1, k2, SUM(v), MAX(w), MIN(u), COUNT(x) FROM t GROUP BY k1, k2 [ORDER BY k1, k2]
    CREATE MATERIALIZED VIEW mv AS SELECT c3, c1, c2 FROM t [ORDER BY c3]

`analyze_mv` turns the SELECT into a `MaterializedIndexMeta` (Doris FE's
CreateMaterializedViewStmt + MaterializedViewHandler rules and messages): one table, plain
columns first (the keys: the GROUP BY columns, or the ORDER BY prefix / short key rule without
aggregates), then SUM / MIN / MAX / COUNT over a column (COUNT(x) is stored as the SUM of a
computed column `mv_count_x`, catalog/index_rows.py). With aggregates the index is AGG_KEYS
(each value column aggregated by its function); on AGGREGATE / UNIQUE tables the functions
must be the columns' own aggregation types and base keys stay keys. The job that builds it is
the ADD ROLLUP job (catalog/rollup_job.py); planner/select_rollup.py rewrites queries to it.

Not supported (refused with 1235): WHERE, expressions inside or outside aggregates,
BITMAP_UNION / HLL_UNION, aggregates over a key column twice.
"""

from __future__ import annotations

from sqlglot import exp

from catalog import rollup_ddl, rollup_job
from catalog.catalog import Catalog
from catalog.errors import AnalysisError, DdlError, NotSupported
from catalog.load import table_lock
from catalog.model import AGG_KEYS, DUP_KEYS, MaterializedIndexMeta, OlapTable
from catalog.rollup import analyze_rollup
from catalog.statements import CreateMaterializedViewStmt, RollupDesc

_FUNCS = {exp.Sum: "SUM", exp.Max: "MAX", exp.Min: "MIN", exp.Count: "COUNT"}


def create_materialized_view(cat: Catalog, db: str | None,
                             stmt: CreateMaterializedViewStmt) -> rollup_job.RollupJob | None:
    select = stmt.query
    if not isinstance(select, exp.Select):
        raise AnalysisError("The materialized view only support select statement")
    tables = list(select.find_all(exp.Table))
    if len(tables) != 1 or select.args.get("joins"):
        raise AnalysisError("The materialized view only support one table in from clause.")
    src = tables[0]
    with cat.lock:
        db_name = cat.get_db(src.db or db).name
        table_id = cat.get_table(db_name, src.name).table_id
    with table_lock(table_id), cat.lock:
        table = cat.get_table(db_name, src.name)
        if table.index_by_name(stmt.name) is not None:
            if stmt.if_not_exists:
                return None
            raise DdlError(f"Materialized view[{stmt.name}] already exists")
        index = analyze_mv(table, stmt.name, select)
        index.define_sql = stmt.sql
        job = rollup_ddl.add_index_job(cat, db_name, table.name, index, stmt.properties)
    rollup_job.start(cat, job)
    return job


def analyze_mv(table: OlapTable, name: str, select: exp.Select) -> MaterializedIndexMeta:
    if select.args.get("where") is not None:
        raise NotSupported("WHERE in a materialized view is not supported yet")
    if select.args.get("having") is not None:
        raise AnalysisError("The having clause is not supported in add materialized view clause")
    if select.args.get("limit") is not None:
        raise AnalysisError("The limit clause is not supported in add materialized view clause")
    keys: list[str] = []
    values: list[tuple[str, str, str]] = []  # (index column, aggregation, base column)
    for item in select.expressions:
        node = item.this if isinstance(item, exp.Alias) else item
        if isinstance(node, exp.Column):
            if values:
                raise AnalysisError("The aggregate column should be after the single column")
            keys.append(_column(table, node.name))
            continue
        func = _FUNCS.get(type(node))
        arg = node.this if func else None
        if isinstance(arg, exp.Distinct) or not isinstance(arg, exp.Column):
            raise NotSupported(f"The materialized view does not support {node.sql('doris')} yet")
        col = _column(table, arg.name)
        if func == "COUNT":
            values.append((f"mv_count_{col}", "SUM", col))
        else:
            values.append((col, func, col))
    group = [_column(table, g.name) if isinstance(g, exp.Column) else "" for g in
             (select.args["group"].expressions if select.args.get("group") else [])]
    order = [_column(table, o.this.name) for o in
             (select.args["order"].expressions if select.args.get("order") else [])
             if isinstance(o.this, exp.Column)]
    _check_columns(keys, values)
    if values or group:
        if sorted(group) != sorted(keys):
            raise AnalysisError("The grouping columns must be the same as the select columns "
                                "that are not aggregated")
        if order and order != keys[:len(order)]:
            raise AnalysisError("The order of columns in order by clause must be same as the "
                                "order of columns in select list")
        return _aggregate_index(table, name, keys, values)
    if table.keys_type != DUP_KEYS:
        raise DdlError("The materialized view of aggregation or unique table must has "
                       "grouping columns")
    if order and order != keys[:len(order)]:
        raise AnalysisError("The order of columns in order by clause must be same as the order "
                            "of columns in select list")
    index = analyze_rollup(table, RollupDesc(name, keys, order or None), 0)
    index.is_mv = True
    return index


def _column(table: OlapTable, name: str) -> str:
    col = table.column(name)
    if col is None:
        raise AnalysisError(f"Unknown column '{name}' in 'table list'")
    return col.name


def _check_columns(keys: list[str], values: list[tuple[str, str, str]]) -> None:
    names = [*keys, *(v[0] for v in values)]
    for n in names:
        if names.count(n) > 1:
            raise AnalysisError(f"The select expr {n} is duplicated.")
    if not keys:
        raise AnalysisError("The materialized view must contain at least one key column")


def _aggregate_index(table: OlapTable, name: str, keys: list[str],
                     values: list[tuple[str, str, str]]) -> MaterializedIndexMeta:
    if table.keys_type != DUP_KEYS:
        for k in table.key_columns:
            if k.name not in keys and any(v[2] == k.name for v in values):
                raise DdlError(f"The column[{k.name}] must be the key of materialized view")
        for col, func, src in values:
            base = table.column(src)
            if base.is_key or col != src or base.aggregation != func:
                raise DdlError(f"The aggregation type of column[{col}] must be same as the "
                               f"aggregate type of base column in aggregate table")
            if base.aggregation.startswith("REPLACE") and len(keys) != len(table.key_columns):
                raise DdlError("The materialized view should contain all keys of base table "
                               "if there is a REPLACE value")
    else:
        fixed = {*table.partition_info.columns, *table.distribution.columns}
        for _, _, src in values:
            if src in fixed:
                raise DdlError(f"The partition and distributed columns {src} must be key "
                               f"column in mv")
    for col, func, src in values:
        if table.column(src).is_key and col == src:
            raise NotSupported(f"An aggregate over the key column {src} in a materialized view "
                               f"is not supported yet")
    return MaterializedIndexMeta(
        0, name, [*keys, *(v[0] for v in values)], AGG_KEYS, len(keys),
        aggregations={col: func for col, func, _ in values},
        define_exprs={col: ["count", src] for col, func, src in values if col != src},
        is_mv=True)
