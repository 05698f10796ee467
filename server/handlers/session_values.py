"""Session values in queries: `@@var`, user variables `@x`, DATABASE(), USER(), CONNECTION_ID(),
VERSION(), FOUND_ROWS() (the rows of the session's last SELECT) ..., and encrypt keys
(`KEY [db.]k`, parsed as `__encrypt_key('db', 'k')`: server/parser/encrypt_key_refs.py).

These are constants for one statement, so they are replaced by literals before planning (the
select item keeps its original text as column name, as MySQL names `@@version_comment`).
"""

from __future__ import annotations

from sqlglot import exp

from catalog.errors import AnalysisError
from planner.naming import output_name
from server.parser import encrypt_key_refs
from server.handlers.context import StatementContext

_FUNCTIONS = {
    "DATABASE": lambda ctx: ctx.db, "SCHEMA": lambda ctx: ctx.db,
    "USER": lambda ctx: _user(ctx), "CURRENT_USER": lambda ctx: _current_user(ctx),
    "SESSION_USER": lambda ctx: _user(ctx), "SYSTEM_USER": lambda ctx: _user(ctx),
    "CONNECTION_ID": lambda ctx: ctx.session.connection_id,
    "FOUND_ROWS": lambda ctx: getattr(ctx.session, "found_rows", 0),
    "VERSION": lambda ctx: ctx.session.variables.get("version"),
    "LAST_QUERY_ID": lambda ctx: "",
    "CURRENT_CATALOG": lambda ctx: "internal",  # the one catalog (catalog/multi_catalog.py)
}


def _user(ctx) -> str:
    """USER(): the login name and the client's address, as Doris prints it ('root'@'ip')."""
    access = getattr(ctx.session, "access", None)
    name = access.name if access is not None else "root"
    ip = (getattr(ctx.session, "host", "") or "127.0.0.1").rsplit(":", 1)[0]
    return f"'{name}'@'{ip}'"


def _current_user(ctx) -> str:
    """CURRENT_USER(): the account the login matched ('name'@'host pattern')."""
    access = getattr(ctx.session, "access", None)
    return access.user.identity if access is not None else "'root'@'%'"


_NODE_FUNCTIONS = {exp.CurrentUser: "CURRENT_USER", exp.SessionUser: "SESSION_USER", exp.CurrentSchema: "DATABASE",
                   exp.CurrentVersion: "VERSION", exp.CurrentCatalog: "CURRENT_CATALOG"}


def _literal(value) -> exp.Expression:
    if value is None:
        return exp.null()
    if isinstance(value, bool):
        return exp.Literal.number(int(value))
    if isinstance(value, (int, float)):
        return exp.Literal.number(value)
    return exp.Literal.string(str(value))


def _function_name(node: exp.Expression) -> str | None:
    if isinstance(node, exp.Anonymous):
        return node.name.upper()
    return _NODE_FUNCTIONS.get(type(node))


def _replace(node: exp.Expression, ctx: StatementContext) -> exp.Expression:
    if isinstance(node, exp.Parameter):  # @x: a user variable, NULL until SET
        return _literal(ctx.session.user_variables.get(node.name.lower()))
    if isinstance(node, exp.SessionParameter):
        variables = ctx.session.variables
        if str(node.args.get("kind") or "").upper() == "GLOBAL":  # @@global.x
            variables = variables.global_variables
        return _literal(variables.get(node.name))
    name = _function_name(node)
    if name in _FUNCTIONS and not getattr(node, "expressions", None):
        return _literal(_FUNCTIONS[name](ctx))
    if name == encrypt_key_refs.FUNCTION:
        return _literal(_encrypt_key(node, ctx))
    return node


def _encrypt_key(node: exp.Anonymous, ctx: StatementContext) -> str:
    """The text of the encrypt key `KEY [db.]k` names (catalog/encrypt_keys.py)."""
    db_name, name = (e.name for e in node.expressions)
    with ctx.catalog.lock:
        db = ctx.catalog.get_db(db_name or ctx.db).name
        key = ctx.catalog.encrypt_keys.get(db, {}).get(name)
    if key is None:
        raise AnalysisError(f"Can not found encryptKey: {db}.{name}")
    return key


def has_session_value(e: exp.Expression) -> bool:
    return any(isinstance(n, (exp.SessionParameter, exp.Parameter))
               or _function_name(n) in _FUNCTIONS or _function_name(n) == encrypt_key_refs.FUNCTION
               for n in e.walk())


def inline_session_values(stmt: exp.Expression, ctx: StatementContext) -> exp.Expression:
    if not has_session_value(stmt):
        return stmt
    stmt = stmt.copy()
    for select in stmt.find_all(exp.Select):
        items = []
        for item in select.expressions:
            if not isinstance(item, exp.Alias) and has_session_value(item):
                item = exp.alias_(item, output_name(item), quoted=True)
            items.append(item)
        select.set("expressions", items)
    return stmt.transform(lambda n: _replace(n, ctx), copy=False)
