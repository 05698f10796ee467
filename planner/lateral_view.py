"""LATERAL VIEW: Doris's table functions beside FROM (`FROM t LATERAL VIEW explode(arr) tmp AS
x [LATERAL VIEW ...]`), bound as `TableFunction` nodes over the FROM clause's plan, one per
view in written order, before WHERE (which may read their columns).

    explode(arr)                    one row per element (rows with NULL or empty arrays dropped)
    explode_split(str, sep)         one row per piece of `str` split at `sep`
    explode_numbers(n)              one row per integer 0 .. n-1
    posexplode(arr)                 two columns: the 0-based position and the element
    explode_map(map)                two columns: each entry's key and value
    explode_bitmap(bitmap)          one BIGINT row per id, ascending
    explode_json_object(json)       two columns: each member's key (VARCHAR) and value (JSON)
    explode_json_array_int|double|string|json(text)
                                    one row per element of a JSON array text, as BIGINT,
                                    DOUBLE, VARCHAR or JSON text (not an array: no rows)
    <any of them>_outer             a row whose function yields nothing is kept once, with NULL

Errors follow Doris's analyzer: an unknown table function, a column count that does not match
the function, a table function outside LATERAL VIEW.
"""

from __future__ import annotations

from sqlglot import exp

from catalog.errors import AnalysisError
from planner import logical as L
from planner.scope import Scope, ScopeColumn

JSON_ARRAY_FUNCTIONS = ("explode_json_array_int", "explode_json_array_double",
                        "explode_json_array_string", "explode_json_array_json")
FUNCTIONS = {"explode": 1, "explode_split": 1, "explode_numbers": 1, "posexplode": 2,
             "explode_map": 2, "explode_bitmap": 1, "explode_json_object": 2,
             **{f: 1 for f in JSON_ARRAY_FUNCTIONS}}
_ARITY = {"explode": 1, "explode_split": 2, "explode_numbers": 1, "posexplode": 1,
          "explode_map": 1, "explode_bitmap": 1, "explode_json_object": 1,
          **{f: 1 for f in JSON_ARRAY_FUNCTIONS}}


def function_name(call: exp.Expression) -> str:
    if isinstance(call, exp.Anonymous):
        return str(call.this).lower()
    return call.sql_name().lower()


def _arguments(call: exp.Expression) -> list[exp.Expression]:
    if isinstance(call, exp.Anonymous):
        return list(call.expressions)
    return [call.this] + list(call.args.get("expressions") or [])


def bind_lateral_views(select: exp.Select, plan: object, scope: Scope, names) -> object:
    """`plan` under the select's LATERAL VIEWs; their columns join `scope`."""
    for lateral in select.args.get("laterals") or []:
        call = lateral.this
        written = function_name(call)
        outer = written.endswith("_outer") or bool(lateral.args.get("outer"))
        name = written[:-len("_outer")] if written.endswith("_outer") else written
        if name not in FUNCTIONS:
            raise AnalysisError(f"Can not find the compatibility function signature: {written}")
        args = _arguments(call)
        if len(args) != _ARITY[name]:
            raise AnalysisError(f"Can not found function '{written}' which has {len(args)} arity.")
        alias = lateral.args.get("alias")
        relation = alias.name if alias is not None else written
        columns = [c.name for c in (alias.columns if alias is not None else [])]
        if len(columns) != FUNCTIONS[name]:
            raise AnalysisError(f"table function {written} returns {FUNCTIONS[name]} column(s), "
                                f"but {len(columns)} column alias(es) were given")
        bound = [scope.bind(a) for a in args]
        internal = [names.new(f"{relation}.{c}#") for c in columns]
        display = f"{written}({', '.join(a.sql(dialect='doris') for a in args)})"
        plan = L.TableFunction(plan, name, bound, internal, outer, display)
        scope.columns.extend(ScopeColumn(relation, c, i) for c, i in zip(columns, internal))
    return plan
