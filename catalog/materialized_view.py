"""CREATE MATERIALIZED VIEW (Doris's synchronous materialized view): an index built like a rollup.

    CREATE MATERIALIZED VIEW mv AS
      SELECT k1, k2, SUM(v), MAX(w), MIN(u), COUNT(x) FROM t GROUP BY k1, k2 [ORDER BY k1, k2]
    CREATE MATERIALIZED VIEW mv AS SELECT c3, c1, c2 FROM t [ORDER BY c3]

`analyze_mv` turns the SELECT into a `MaterializedIndexMeta` (Doris FE's
CreateMaterializedViewStmt + MaterializedViewHandler rules and messages): one table, plain
columns first (the keys: the GROUP BY columns, or the ORDER BY prefix / short key rule without
aggregates), then SUM / MIN / MAX / COUNT over a column (COUNT(x) is stored as the SUM of a
computed column `mv_count_x`) or SUM / MIN / MAX over an arithmetic expression of columns
(+ - *; a computed column `mv_sum_<n>_<cols>`; catalog/index_rows.py). With aggregates the index is AGG_KEYS
(each value column aggregated by its function); on AGGREGATE / UNIQUE tables the functions
must be the columns' own aggregation types and base keys stay keys. The job that builds it is
the ADD ROLLUP job (catalog/rollup_job.py); planner/select_rollup.py rewrites queries to it.

A WHERE (deterministic, over base columns, no aggregates or subqueries; on AGGREGATE / UNIQUE
tables over key columns only) keeps only the rows it selects (`where_clause`): every load and
the build filter the base rows with it (catalog/index_rows.py), and the planner uses the view
only for a query whose WHERE holds each of its conjuncts (planner/select_rollup.py).

Not supported (refused with 1235): expressions outside aggregates or other than + - *,
BITMAP_UNION / HLL_UNION, aggregates over a key column.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from catalog import rollup_ddl, rollup_job
from catalog.catalog import Catalog
from catalog.errors import AnalysisError, DdlError, NotSupported
from catalog.index_rows import ALLOWED
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
    index = _analyze_select(table, name, select)
    where = select.args.get("where")
    if where is not None:
        index.where_clause = _where_clause(table, where.this)
    return index


_NOT_DETERMINISTIC = {"now", "current_time", "current_date", "current_timestamp",
                      "utc_timestamp", "uuid", "random", "rand", "unix_timestamp", "curdate",
                      "curtime", "localtime", "localtimestamp", "sysdate"}


def _where_clause(table: OlapTable, where: exp.Expression) -> str:
    """The view's WHERE as canonical Doris SQL over base column names (Doris's rules)."""
    if where.find(exp.AggFunc):
        raise AnalysisError("The where clause of materialized view can not contain aggregate "
                            "function")
    if where.find(exp.Subquery, exp.Exists) or isinstance(where, exp.Select):
        raise AnalysisError("The where clause of materialized view can not contain subquery")
    for f in where.find_all(exp.Func):
        fname = (f.sql_name() if not isinstance(f, exp.Anonymous) else f.name).lower()
        if fname in _NOT_DETERMINISTIC or type(f).__name__.lower() in _NOT_DETERMINISTIC:
            raise AnalysisError(f"The materialized view contain {fname} is disallowed")
    names = {}
    for c in where.find_all(exp.Column):
        names[c.name] = _column(table, c.name)
        if table.keys_type != DUP_KEYS and not table.column(c.name).is_key:
            raise AnalysisError(f"The where clause contained value column {names[c.name]} of an "
                                f"aggregate or unique table is not supported")
    return expression_text(where, names)


def _analyze_select(table: OlapTable, name: str, select: exp.Select) -> MaterializedIndexMeta:
    if select.args.get("having") is not None:
        raise AnalysisError("The having clause is not supported in add materialized view clause")
    if select.args.get("limit") is not None:
        raise AnalysisError("The limit clause is not supported in add materialized view clause")
    keys: list[str] = []
    values: list[_Value] = []
    for item in select.expressions:
        node = item.this if isinstance(item, exp.Alias) else item
        if isinstance(node, exp.Column):
            if values:
                raise AnalysisError("The aggregate column should be after the single column")
            keys.append(_column(table, node.name))
            continue
        values.append(_value(table, node, len(values)))
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


@dataclass
class _Value:
    column: str                 # the index column
    func: str                   # its aggregation: SUM, MIN, MAX
    source: str                 # the base column it aggregates ("" for a computed column)
    define: list[str] | None    # catalog/index_rows.py's definition of a computed column
    type: str = "BIGINT"


def _value(table: OlapTable, node: exp.Expression, n: int) -> _Value:
    func = _FUNCS.get(type(node))
    arg = node.this if func else None
    if func is None or isinstance(arg, exp.Distinct) or arg is None:
        raise NotSupported(f"The materialized view does not support {node.sql('doris')} yet")
    if isinstance(arg, exp.Column):
        col = _column(table, arg.name)
        if func == "COUNT":
            return _Value(f"mv_count_{col}", "SUM", "", ["count", col])
        return _Value(col, func, col, None)
    if func == "COUNT" or any(not isinstance(x, (*ALLOWED, exp.Identifier)) for x in arg.walk()):
        raise NotSupported(f"The materialized view does not support {node.sql('doris')} yet")
    cols = [_column(table, c.name) for c in arg.find_all(exp.Column)]
    text = expression_text(arg, {c.name: _column(table, c.name) for c in arg.find_all(exp.Column)})
    floating = any(not table.column(c).type.is_integer for c in cols)
    return _Value(f"mv_{func.lower()}_{n}_{'_'.join(dict.fromkeys(cols))}", func, "",
                  ["expr", text], "DOUBLE" if floating else "BIGINT")


def expression_text(e: exp.Expression, names: dict[str, str]) -> str:
    """The canonical text of an arithmetic expression with its columns renamed by `names`
    (the planner matches a query's aggregate argument against a view's with it)."""
    return e.transform(lambda n: exp.column(names[n.name]) if isinstance(n, exp.Column)
                       and n.name in names else n).sql("doris")


def _column(table: OlapTable, name: str) -> str:
    col = table.column(name)
    if col is None:
        raise AnalysisError(f"Unknown column '{name}' in 'table list'")
    return col.name


def _check_columns(keys: list[str], values: list[_Value]) -> None:
    names = [*keys, *(v.column for v in values)]
    for n in names:
        if names.count(n) > 1:
            raise AnalysisError(f"The select expr {n} is duplicated.")
    if not keys:
        raise AnalysisError("The materialized view must contain at least one key column")


def _aggregate_index(table: OlapTable, name: str, keys: list[str],
                     values: list[_Value]) -> MaterializedIndexMeta:
    if table.keys_type != DUP_KEYS:
        for k in table.key_columns:
            if k.name not in keys and any(v.source == k.name for v in values):
                raise DdlError(f"The column[{k.name}] must be the key of materialized view")
        for v in values:
            base = table.column(v.source) if v.source else None
            if base is None or base.is_key or base.aggregation != v.func:
                raise DdlError(f"The aggregation type of column[{v.column}] must be same as the "
                               f"aggregate type of base column in aggregate table")
            if base.aggregation.startswith("REPLACE") and len(keys) != len(table.key_columns):
                raise DdlError("The materialized view should contain all keys of base table "
                               "if there is a REPLACE value")
    else:
        fixed = {*table.partition_info.columns, *table.distribution.columns}
        for v in values:
            if v.source in fixed:
                raise DdlError(f"The partition and distributed columns {v.source} must be key "
                               f"column in mv")
    for v in values:
        if v.source and table.column(v.source).is_key:
            raise NotSupported(f"An aggregate over the key column {v.source} in a materialized "
                               f"view is not supported yet")
    return MaterializedIndexMeta(
        0, name, [*keys, *(v.column for v in values)], AGG_KEYS, len(keys),
        aggregations={v.column: v.func for v in values},
        define_exprs={v.column: v.define for v in values if v.define},
        properties={f"type.{v.column}": v.type for v in values if v.define},
        is_mv=True)


def display_name(index: MaterializedIndexMeta, column, keys_type: str) -> str:
    r"""A materialized view column's name as Doris 2.x shows it (DESC t ALL): keys `mv_<col>`,
    aggregated values `mva_<AGG>__\`<col>\``, COUNT(x) as `mva_SUM__CASE WHEN \`x\` IS NULL THEN 0
    ELSE 1 END` and an expression's aggregate over its text; rollups keep the base names."""
    if not index.is_mv:
        return column.name
    define = index.define_exprs.get(column.name)
    if define is not None and define[0] == "count":
        return f"mva_SUM__CASE WHEN `{define[1]}` IS NULL THEN 0 ELSE 1 END"
    agg = index.aggregations.get(column.name) or (None if column.is_key else column.aggregation)
    if define is not None:
        import sqlglot
        text = sqlglot.parse_one(define[1], read="doris").transform(
            lambda n: exp.column(n.name, quoted=True) if isinstance(n, exp.Column) else n)
        return f"mva_{agg or 'SUM'}__({text.sql('doris')})"
    if column.is_key or not agg or keys_type == DUP_KEYS and not index.aggregations:
        return f"mv_{column.name}"
    return f"mva_{agg}__`{column.name}`"
