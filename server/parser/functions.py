"""Parsers of Doris's function DDL and SHOW (catalog/alias_functions.py):

    CREATE [GLOBAL] ALIAS FUNCTION name(type, ...) WITH PARAMETER(p, ...) AS <expression>
    DROP [GLOBAL] FUNCTION [IF EXISTS] name(type, ...)
    SHOW [FULL] [GLOBAL] FUNCTIONS [IN | FROM db] [LIKE 'pattern']
    SHOW BUILTIN FUNCTIONS [IN | FROM db] [LIKE 'pattern']   (server/handlers/builtin_functions.py)

CREATE FUNCTION without ALIAS (Java UDFs) is left to the next parser, which refuses it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot.tokens import TokenType

from catalog.errors import AnalysisError, NotSupported
from server.parser.tokens import TokenCursor


@dataclass
class CreateAliasFunctionStmt:
    is_global: bool
    name: str
    db: str | None
    arg_types: list[str]
    parameters: list[str]
    origin: str


@dataclass
class DropFunctionStmt:
    is_global: bool
    name: str
    db: str | None
    arg_types: list[str] = field(default_factory=list)
    if_exists: bool = False


@dataclass
class ShowFunctionsStmt:
    full: bool
    is_global: bool
    db: str | None
    like: str | None
    builtin: bool = False


def _arg_types(cur: TokenCursor) -> list[str]:
    """`(type, ...)`: each type's text as written (`DECIMAL(10, 2)`)."""
    cur.expect_type(TokenType.L_PAREN, "'('")
    if cur.accept_type(TokenType.R_PAREN):
        return []
    types = [cur.expression_text(what="a type")]
    while cur.accept_type(TokenType.COMMA):
        types.append(cur.expression_text(what="a type"))
    cur.expect_type(TokenType.R_PAREN, "')'")
    return types


def _name(cur: TokenCursor) -> tuple[str | None, str]:
    return cur.qualified_name()


def _create(cur: TokenCursor) -> object | None:
    cur.expect("CREATE")
    is_global = cur.accept("GLOBAL")
    if not cur.accept("ALIAS"):
        return None  # CREATE [GLOBAL] FUNCTION (a Java UDF): the next parser refuses it
    cur.expect("FUNCTION")
    db, name = _name(cur)
    arg_types = _arg_types(cur)
    cur.expect("WITH", "PARAMETER")
    parameters = cur.paren_list(lambda: cur.identifier("parameter name"))
    cur.expect("AS")
    origin = cur.rest_sql().strip().rstrip(";").strip()
    if not origin:
        raise AnalysisError("Alias function needs an expression after AS")
    return CreateAliasFunctionStmt(is_global, name, db, arg_types, parameters, origin)


def _drop(cur: TokenCursor) -> object:
    cur.expect("DROP")
    is_global = cur.accept("GLOBAL")
    cur.expect("FUNCTION")
    if_exists = cur.accept("IF", "EXISTS")
    db, name = _name(cur)
    arg_types = _arg_types(cur)
    cur.expect_end()
    return DropFunctionStmt(is_global, name, db, arg_types, if_exists)


def _show(cur: TokenCursor) -> object:
    cur.expect("SHOW")
    full = cur.accept("FULL")
    builtin = cur.accept("BUILTIN")
    if builtin and full:
        raise NotSupported("SHOW FULL BUILTIN FUNCTIONS is not supported: minidoris keeps no "
                           "signatures of its built-in functions")
    is_global = not builtin and cur.accept("GLOBAL")
    cur.expect("FUNCTIONS")
    db = cur.identifier("database name") if cur.accept("IN") or cur.accept("FROM") else None
    like = cur.string("pattern") if cur.accept("LIKE") else None
    cur.expect_end()
    return ShowFunctionsStmt(full, is_global, db, like, builtin)


OWN_PARSERS = (
    (("CREATE", "ALIAS", "FUNCTION"), _create),
    (("CREATE", "GLOBAL", "ALIAS", "FUNCTION"), _create),
    (("DROP", "FUNCTION"), _drop),
    (("DROP", "GLOBAL", "FUNCTION"), _drop),
    (("SHOW", "FUNCTIONS"), _show),
    (("SHOW", "FULL", "FUNCTIONS"), _show),
    (("SHOW", "GLOBAL", "FUNCTIONS"), _show),
    (("SHOW", "FULL", "GLOBAL", "FUNCTIONS"), _show),
    (("SHOW", "BUILTIN", "FUNCTIONS"), _show),
    (("SHOW", "FULL", "BUILTIN", "FUNCTIONS"), _show),
)
