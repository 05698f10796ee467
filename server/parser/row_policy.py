"""Parsers for row policies (catalog/row_policy.py):

    CREATE ROW POLICY [IF NOT EXISTS] p ON [db.]t AS {RESTRICTIVE | PERMISSIVE}
        TO {user | ROLE role} USING (predicate)
    DROP ROW POLICY [IF EXISTS] p ON [db.]t [FOR user | ROLE role]
    SHOW ROW POLICY [FOR user | ROLE role]
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot.tokens import TokenType

from server.parser.auth import user_ident
from server.parser.tokens import TokenCursor


@dataclass
class CreateRowPolicyStmt:
    name: str
    db: str | None
    table: str
    filter_type: str
    user: str | None
    role: str | None
    predicate: str
    if_not_exists: bool
    origin: str


@dataclass
class DropRowPolicyStmt:
    name: str
    db: str | None
    table: str
    user: str | None
    role: str | None
    if_exists: bool


@dataclass
class ShowRowPolicyStmt:
    user: str | None
    role: str | None


def _grantee(cur: TokenCursor) -> tuple[str | None, str | None]:
    if cur.accept("ROLE"):
        return None, cur.identifier("role name")
    return user_ident(cur).name, None


def parse_create_row_policy(cur: TokenCursor) -> CreateRowPolicyStmt:
    cur.expect("CREATE", "ROW", "POLICY")
    if_not_exists = cur.accept("IF", "NOT", "EXISTS")
    name = cur.identifier("policy name")
    cur.expect("ON")
    db, table = cur.qualified_name()
    cur.expect("AS")
    filter_type = cur.identifier("RESTRICTIVE or PERMISSIVE").upper()
    if filter_type not in ("RESTRICTIVE", "PERMISSIVE"):
        raise cur.error("Expected RESTRICTIVE or PERMISSIVE")
    cur.expect("TO")
    user, role = _grantee(cur)
    cur.expect("USING")
    if not cur.is_type(TokenType.L_PAREN):
        raise cur.error("Expected ( after USING")
    predicate = cur.rest_sql().strip().rstrip(";").strip()
    if not (predicate.startswith("(") and predicate.endswith(")")) or len(predicate) < 3:
        raise cur.error("Expected USING (predicate)")
    return CreateRowPolicyStmt(name, db, table, filter_type, user, role, predicate[1:-1].strip(),
                               if_not_exists, cur.sql.strip().rstrip(";"))


def parse_drop_row_policy(cur: TokenCursor) -> DropRowPolicyStmt:
    cur.expect("DROP", "ROW", "POLICY")
    if_exists = cur.accept("IF", "EXISTS")
    name = cur.identifier("policy name")
    cur.expect("ON")
    db, table = cur.qualified_name()
    user = role = None
    if cur.accept("FOR"):
        user, role = _grantee(cur)
    cur.expect_end()
    return DropRowPolicyStmt(name, db, table, user, role, if_exists)


def parse_show_row_policy(cur: TokenCursor) -> ShowRowPolicyStmt:
    cur.expect("SHOW", "ROW", "POLICY")
    user = role = None
    if cur.accept("FOR"):
        user, role = _grantee(cur)
    cur.expect_end()
    return ShowRowPolicyStmt(user, role)


OWN_PARSERS = (
    (("CREATE", "ROW", "POLICY"), parse_create_row_policy),
    (("DROP", "ROW", "POLICY"), parse_drop_row_policy),
    (("SHOW", "ROW", "POLICY"), parse_show_row_policy),
)
