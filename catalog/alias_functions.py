"""Doris's alias functions: CREATE [GLOBAL] ALIAS FUNCTION f(INT, ...) WITH PARAMETER(x, ...)
AS <expression>, DROP [GLOBAL] FUNCTION [IF EXISTS] f(INT, ...), and their use in queries.

A function belongs to a database (or, GLOBAL, to every database) and is named by its name and
argument types (overloads by arity). Queries use it by name: `expand` replaces each call with
the expression, every parameter replaced by the call's argument (as Doris inlines an
AliasFunction at analysis; its documented example passes a BIGINT to an INT parameter). Java UDFs (CREATE FUNCTION ... PROPERTIES
("type" = "JAVA_UDF")) are not available here.

Journal operations (entries of `catalog/catalog.py:_APPLY`), state `Catalog.functions`
({db name or "" for GLOBAL: {signature: definition}}):

    op               data
    create_function  {db, name, arg_types, parameters, origin}
    drop_function    {db, signature}
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from catalog.errors import AnalysisError, DdlError

GLOBAL = ""  # the key of global functions in Catalog.functions
MAX_DEPTH = 16  # alias functions calling alias functions: expansion rounds at most


def signature(name: str, arg_types: list[str]) -> str:
    return f"{name.lower()}({', '.join(t.upper() for t in arg_types)})"


def create_alias_function(cat, db: str | None, name: str, arg_types: list[str],
                          parameters: list[str], origin: str) -> None:
    if len(arg_types) != len(parameters):
        raise AnalysisError("Alias function [" + name + "] args number is not equal to "
                            "parameters number")
    if len({p.lower() for p in parameters}) != len(parameters):
        raise AnalysisError(f"Duplicated param name in alias function [{name}]")
    try:
        body = sqlglot.parse_one(origin, read="doris")
    except sqlglot.errors.ParseError as e:
        raise AnalysisError(f"Syntax error in alias function body: {origin}") from e
    used = {c.name.lower() for c in body.find_all(exp.Column)}
    missing = [p for p in parameters if p.lower() not in used]
    if missing:
        raise AnalysisError(f"Alias function [{name}] do not contain parameter [{missing[0]}]")
    with cat.lock:
        key = GLOBAL if db is None else cat.get_db(db).name
        sig = signature(name, arg_types)
        if sig in cat.functions.get(key, {}):
            raise DdlError(f"function already exists: {sig}")
        cat._log("create_function", {"db": key, "name": name.lower(),  # noqa: SLF001
                                     "arg_types": [t.upper() for t in arg_types],
                                     "parameters": parameters, "origin": origin})


def drop_function(cat, db: str | None, name: str, arg_types: list[str],
                  if_exists: bool = False) -> None:
    with cat.lock:
        key = GLOBAL if db is None else cat.get_db(db).name
        sig = signature(name, arg_types)
        if sig not in cat.functions.get(key, {}):
            if if_exists:
                return
            raise DdlError(f"Unknown function {sig}")
        cat._log("drop_function", {"db": key, "signature": sig})  # noqa: SLF001


def functions_of(cat, db: str | None, include_global: bool = True) -> list[dict]:
    with cat.lock:
        found = dict(cat.functions.get(GLOBAL, {})) if include_global else {}
        if db is not None:
            found.update(cat.functions.get(db, {}))
        return [found[k] for k in sorted(found)]


def expand(stmt: exp.Expression, cat, db: str | None) -> exp.Expression:
    """`stmt` with its calls of alias functions (of `db`, then global) inlined; unchanged
    (the same object) when it calls none."""
    with cat.lock:
        if not cat.functions:
            return stmt
        known = {**cat.functions.get(GLOBAL, {}), **cat.functions.get(db or "", {})}
    by_name: dict[str, dict[int, dict]] = {}
    for fn in known.values():
        by_name.setdefault(fn["name"], {})[len(fn["arg_types"])] = fn
    if not by_name or not any(_name(n) in by_name for n in stmt.walk()):
        return stmt
    stmt = _name_items(stmt.copy(), by_name)
    for _ in range(MAX_DEPTH):
        if not any(_name(n) in by_name for n in stmt.walk()):
            return stmt
        stmt = stmt.transform(lambda n: _inline(n, by_name), copy=False)
    raise AnalysisError("alias functions nest too deeply (or call themselves)")


def _name(node: exp.Expression) -> str | None:
    return node.name.lower() if isinstance(node, exp.Anonymous) else None


def _name_items(stmt: exp.Expression, by_name: dict) -> exp.Expression:
    """Select items that call an alias function keep the call's text as their name."""
    from planner.naming import output_name
    for select in stmt.find_all(exp.Select):
        items = []
        for item in select.expressions:
            if not isinstance(item, exp.Alias) and any(_name(n) in by_name for n in item.walk()):
                item = exp.alias_(item, output_name(item), quoted=True)
            items.append(item)
        select.set("expressions", items)
    return stmt


def _inline(node: exp.Expression, by_name: dict) -> exp.Expression:
    name = _name(node)
    if name is None or name not in by_name:
        return node
    args = node.expressions
    fn = by_name[name].get(len(args))
    if fn is None:
        raise AnalysisError(f"Can not found function '{name}' which has {len(args)} arity. "
                            f"Candidate functions are: "
                            f"[{', '.join(f['name'] + '(' + ', '.join(f['arg_types']) + ')' for f in by_name[name].values())}]")
    # the arguments as written, not cast to the declared types: Doris's own example,
    # id_masking(INT) called with 13812345678, returns 138****5678
    values = {p.lower(): a.copy() for p, a in zip(fn["parameters"], args)}
    body = sqlglot.parse_one(fn["origin"], read="doris")

    def substitute(n: exp.Expression) -> exp.Expression:
        if isinstance(n, exp.Column) and not n.table and n.name.lower() in values:
            return values[n.name.lower()].copy()
        return n
    return exp.Paren(this=body.transform(substitute))


def _apply_create(cat, data: dict) -> None:
    sig = signature(data["name"], data["arg_types"])
    cat.functions.setdefault(data["db"], {})[sig] = {**data, "signature": sig}


def _apply_drop(cat, data: dict) -> None:
    cat.functions.get(data["db"], {}).pop(data["signature"], None)


APPLY = {"create_function": _apply_create, "drop_function": _apply_drop}
