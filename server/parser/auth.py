"""Parsers for account management: users, roles, passwords, GRANT/REVOKE, SHOW GRANTS/ROLES.

The forms are listed in catalog/auth_statements.py. A user identity is `'name'@'host'`,
`name@'host'` or `'name'` (host `%`); passwords are scrambled here (MySQL double SHA-1), so the
clear text never leaves the parser.
"""

from __future__ import annotations

from sqlglot.tokens import TokenType

from catalog.auth import ALIASES, BIT, check_scrambled, scramble_password
from catalog.auth_statements import (AlterUserStmt, CreateRoleStmt, CreateUserStmt, DropRoleStmt,
                                     DropUserStmt, GrantStmt, SetPasswordStmt, SetPropertyStmt,
                                     ShowGrantsStmt, ShowPropertyStmt, ShowRolesStmt, UserIdent)
from catalog.errors import AnalysisError
from server.parser.tokens import TokenCursor

_NAME_TYPES = (TokenType.STRING, TokenType.VAR, TokenType.IDENTIFIER)


def _name(cur: TokenCursor, what: str) -> str:
    t = cur.peek()
    if t is None or t.token_type in (TokenType.COMMA, TokenType.DOT, TokenType.L_PAREN,
                                     TokenType.R_PAREN, TokenType.EQ, TokenType.SEMICOLON):
        raise cur.error(f"Expected {what}")
    cur.i += 1
    return t.text


def user_ident(cur: TokenCursor) -> UserIdent:
    name = _name(cur, "user name")
    host = "%"
    t = cur.peek()
    if t is not None and t.text.startswith("@"):
        cur.i += 1
        host = t.text[1:] if len(t.text) > 1 else _name(cur, "host")
    if not name:
        raise AnalysisError("Does not support anonymous user")
    return UserIdent(name, host.strip("'\"`"))


def _password(cur: TokenCursor) -> str:
    """`'pw'`, `PASSWORD 'scrambled'` (after IDENTIFIED BY) or `PASSWORD('pw')` (SET PASSWORD)."""
    if cur.accept("PASSWORD"):
        if cur.accept_type(TokenType.L_PAREN):
            text = cur.string("password")
            cur.expect_type(TokenType.R_PAREN, ")")
            return scramble_password(text)
        return check_scrambled(cur.string("password hash"))
    text = cur.string("password")
    return check_scrambled(text) if text.startswith("*") and len(text) == 41 else \
        scramble_password(text)


def _comment(cur: TokenCursor) -> str | None:
    return cur.string("comment") if cur.accept("COMMENT") else None


def parse_create_user(cur: TokenCursor) -> CreateUserStmt:
    cur.expect("CREATE", "USER")
    if_not_exists = cur.accept("IF", "NOT", "EXISTS")
    stmt = CreateUserStmt(user_ident(cur), if_not_exists=if_not_exists)
    if cur.accept("IDENTIFIED", "BY"):
        stmt.password = _password(cur)
    if cur.accept("DEFAULT", "ROLE"):
        stmt.roles = [_name(cur, "role name")]
    stmt.comment = _comment(cur) or ""
    cur.expect_end()
    return stmt


def parse_alter_user(cur: TokenCursor) -> AlterUserStmt:
    cur.expect("ALTER", "USER")
    if_exists = cur.accept("IF", "EXISTS")
    stmt = AlterUserStmt(user_ident(cur), if_exists=if_exists)
    if cur.accept("IDENTIFIED", "BY"):
        stmt.password = _password(cur)
    stmt.comment = _comment(cur)
    cur.expect_end()
    return stmt


def parse_drop_user(cur: TokenCursor) -> DropUserStmt:
    cur.expect("DROP", "USER")
    if_exists = cur.accept("IF", "EXISTS")
    stmt = DropUserStmt(user_ident(cur), if_exists)
    cur.expect_end()
    return stmt


def parse_set_password(cur: TokenCursor) -> SetPasswordStmt:
    cur.expect("SET", "PASSWORD")
    user = user_ident(cur) if cur.accept("FOR") else None
    cur.expect_type(TokenType.EQ, "=")
    stmt = SetPasswordStmt(user, _password(cur))
    cur.expect_end()
    return stmt


def parse_create_role(cur: TokenCursor) -> CreateRoleStmt:
    cur.expect("CREATE", "ROLE")
    if_not_exists = cur.accept("IF", "NOT", "EXISTS")
    stmt = CreateRoleStmt(_name(cur, "role name"), if_not_exists)
    stmt.comment = _comment(cur) or ""
    cur.expect_end()
    return stmt


def parse_drop_role(cur: TokenCursor) -> DropRoleStmt:
    cur.expect("DROP", "ROLE")
    if_exists = cur.accept("IF", "EXISTS")
    stmt = DropRoleStmt(_name(cur, "role name"), if_exists)
    cur.expect_end()
    return stmt


def _privileges(cur: TokenCursor) -> int:
    mask = 0
    while True:
        word = _name(cur, "privilege").upper()
        if word == "ALL":
            cur.accept("PRIVILEGES")
        if word in BIT:
            mask |= BIT[word]
        elif word in ALIASES:
            mask |= ALIASES[word]
        else:
            raise AnalysisError(f"Unknown privilege type {word}")
        if not cur.accept_type(TokenType.COMMA):
            return mask


def _pattern_part(cur: TokenCursor) -> str:
    if cur.accept_type(TokenType.STAR):
        return "*"
    return _name(cur, "database or table name").strip("`")


def _scope(cur: TokenCursor, mask: int) -> tuple:
    if cur.accept("RESOURCE"):
        return ("resource", _name(cur, "resource name"))
    if cur.accept("WORKLOAD", "GROUP"):
        return ("wg", _name(cur, "workload group name"))
    if cur.accept("CLUSTER") or cur.accept("COMPUTE", "GROUP") or cur.accept("STAGE"):
        raise AnalysisError("Unsupported privilege object: minidoris has no clusters or stages")
    parts = [_pattern_part(cur)]
    while cur.accept_type(TokenType.DOT):
        parts.append(_pattern_part(cur))
    if len(parts) == 2:
        parts = ["*" if parts == ["*", "*"] else "internal", *parts]
    if len(parts) != 3 or any(p == "*" and q != "*" for p, q in zip(parts, parts[1:])):
        raise AnalysisError(f"Invalid privilege object: {'.'.join(parts)}")
    scope = tuple(parts)
    if mask & (BIT["ADMIN_PRIV"] | BIT["NODE_PRIV"]) and scope != ("*", "*", "*"):
        raise AnalysisError("ADMIN_PRIV and NODE_PRIV can only be granted/revoke on/from *.*.*")
    if mask & BIT["USAGE_PRIV"]:
        raise AnalysisError("Can not grant/revoke USAGE_PRIV to/from any other objects except "
                            "resource or workload group")
    return scope


def parse_grant(cur: TokenCursor) -> GrantStmt:
    grant = cur.accept("GRANT")
    if not grant:
        cur.expect("REVOKE")
    to = "TO" if grant else "FROM"
    if cur.is_type(TokenType.STRING):  # GRANT 'r1', 'r2' TO user
        roles = [cur.string("role name")]
        while cur.accept_type(TokenType.COMMA):
            roles.append(cur.string("role name"))
        cur.expect(to)
        stmt = GrantStmt(grant, roles=roles, user=user_ident(cur))
        cur.expect_end()
        return stmt
    mask = _privileges(cur)
    cur.expect("ON")
    scope = _scope(cur, mask)
    if scope[0] in ("resource", "wg") and mask & ~(BIT["USAGE_PRIV"] | BIT["GRANT_PRIV"]):
        raise AnalysisError("Can not grant/revoke privileges other than USAGE_PRIV and "
                            "GRANT_PRIV on a resource or workload group")
    cur.expect(to)
    stmt = GrantStmt(grant, mask, scope)
    if cur.accept("ROLE"):
        stmt.role = _name(cur, "role name")
    else:
        stmt.user = user_ident(cur)
    cur.expect_end()
    return stmt


def parse_show_grants(cur: TokenCursor) -> ShowGrantsStmt:
    cur.expect("SHOW")
    all_ = cur.accept("ALL")
    cur.expect("GRANTS")
    user = None
    if cur.accept("FOR"):
        if cur.accept("CURRENT_USER"):  # MySQL's spelling of plain SHOW GRANTS (Metabase)
            if cur.accept_type(TokenType.L_PAREN):
                cur.expect_type(TokenType.R_PAREN, ")")
        else:
            user = user_ident(cur)
    cur.expect_end()
    return ShowGrantsStmt(all_, user)


def parse_show_roles(cur: TokenCursor) -> ShowRolesStmt:
    cur.expect("SHOW", "ROLES")
    cur.expect_end()
    return ShowRolesStmt()


def parse_set_property(cur: TokenCursor) -> SetPropertyStmt:
    cur.expect("SET", "PROPERTY")
    user = _name(cur, "user name") if cur.accept("FOR") else None
    key = cur.string("property name")
    cur.expect_type(TokenType.EQ, "=")
    value = cur.string("property value")
    cur.expect_end()
    return SetPropertyStmt(user, key, value)


def parse_show_property(cur: TokenCursor) -> ShowPropertyStmt:
    cur.expect("SHOW", "PROPERTY")
    user = _name(cur, "user name") if cur.accept("FOR") else None
    cur.expect_end()
    return ShowPropertyStmt(user)


OWN_PARSERS = (
    (("CREATE", "USER"), parse_create_user),
    (("ALTER", "USER"), parse_alter_user),
    (("DROP", "USER"), parse_drop_user),
    (("SET", "PASSWORD"), parse_set_password),
    (("CREATE", "ROLE"), parse_create_role),
    (("DROP", "ROLE"), parse_drop_role),
    (("GRANT",), parse_grant),
    (("REVOKE",), parse_grant),
    (("SHOW", "GRANTS"), parse_show_grants),
    (("SHOW", "ALL", "GRANTS"), parse_show_grants),
    (("SHOW", "ROLES"), parse_show_roles),
    (("SET", "PROPERTY"), parse_set_property),
    (("SHOW", "PROPERTY"), parse_show_property),
)
