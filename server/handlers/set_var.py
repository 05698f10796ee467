"""SET statements: session variables, SET NAMES / CHARACTER SET, transaction characteristics.

Values must be constants; `@@sql_mode` style references are resolved against the session
first, and `concat(...)` of constants (MariaDB Connector/J sends one at connect time) is
evaluated, so connect-time SETs from drivers do not fail.
"""

from __future__ import annotations

from mysql_mimic.errors import MysqlError
from mysql_mimic.intercept import setitem_kind
from mysql_mimic.variables import DEFAULT
from sqlglot import exp

from catalog.errors import DorisError
from catalog.global_variables import persist_global_variable
from executor.expressions.time_zones import UnknownTimeZone, standardize
from server.handlers.context import StatementContext
from server.results import OkResult
from server.system_variables import UnknownVariable, VariableScopeError


def _value(e: exp.Expression, ctx: StatementContext):
    if isinstance(e, exp.SessionParameter):
        return ctx.session.variables.get(e.name)
    if isinstance(e, exp.Literal):
        return e.this if e.is_string else (int(e.this) if e.this.lstrip("-").isdigit() else float(e.this))
    if isinstance(e, exp.Boolean):
        return bool(e.this)
    if isinstance(e, exp.Null):
        return None
    if isinstance(e, (exp.Var, exp.Column, exp.Identifier)):
        name = e.name
        if name.upper() == "DEFAULT":  # SET x = DEFAULT
            return DEFAULT
        return {"on": True, "off": False}.get(name.lower(), name)
    if isinstance(e, exp.Neg):
        return -_value(e.this, ctx)
    if isinstance(e, (exp.Concat, exp.DPipe)):
        parts = [_value(x, ctx) for x in (e.expressions or [e.this, e.expression])]
        return "".join("" if p is None else str(p) for p in parts)
    if isinstance(e, exp.Anonymous) and e.name.lower() == "concat":
        return "".join("" if _value(x, ctx) is None else str(_value(x, ctx)) for x in e.expressions)
    raise DorisError("Set statement does't support non-constant expr.")


def set_statement(stmt: exp.Set, ctx: StatementContext) -> OkResult:
    variables = ctx.session.variables
    for item in stmt.expressions:
        kind = setitem_kind(item)
        if kind == "NAMES" or kind == "CHARACTER SET":
            charset = item.name if item.name and item.name.upper() != "DEFAULT" else "utf8mb4"
            for v in ("character_set_client", "character_set_connection", "character_set_results"):
                variables.set(v, _charset(charset))
            continue
        if kind == "TRANSACTION":
            continue
        assignment = item.this
        left = assignment.left
        name = left.name.lower()
        if isinstance(left, exp.Parameter):  # a user variable: SET @x = <constant>
            ctx.session.user_variables[name] = _value(assignment.right, ctx)
            continue
        scope = str(item.args.get("kind") or "").upper()
        if isinstance(left, exp.SessionParameter) and left.args.get("kind"):
            scope = str(left.args["kind"]).upper()  # SET @@global.x = ...
        value = _value(assignment.right, ctx)
        if name == "time_zone" and isinstance(value, str):
            value = _time_zone(value)
        try:
            variables.set_scoped(name, value, "GLOBAL" if scope == "GLOBAL" else None)
            if scope == "GLOBAL":  # kept across restarts, as Doris's edit log keeps it
                persist_global_variable(ctx.catalog, name, variables.global_variables.get(name))
        except MysqlError:
            raise UnknownVariable(name) from None
        except (TypeError, ValueError):
            raise VariableScopeError(
                1231, f"Variable '{name}' can't be set to the value of '{value}'") from None
    return OkResult()


def _time_zone(value: str) -> str:
    """The stored form of a time zone (`+5:00` -> `+05:00`); Doris's 1298 for a bad one."""
    try:
        return standardize(value)
    except UnknownTimeZone as e:
        raise VariableScopeError(1298, str(e)) from None


def _charset(name: str) -> str:
    low = name.lower().strip("'\"")
    return "utf8mb4" if low in ("utf8", "utf8mb3", "utf8mb4") else low
