"""Parsers of the DDL and SHOW of Doris's cluster-level administration objects (sqlglot leaves
them raw): SQL block rules, workload groups and encrypt keys.

    CREATE SQL_BLOCK_RULE [IF NOT EXISTS] r PROPERTIES ("k" = "v", ...)
    ALTER SQL_BLOCK_RULE r PROPERTIES ("k" = "v", ...)
    DROP SQL_BLOCK_RULE [IF EXISTS] r [, r2 ...]
    SHOW SQL_BLOCK_RULE [FOR r]
    CREATE WORKLOAD GROUP [IF NOT EXISTS] g PROPERTIES (...)
    ALTER WORKLOAD GROUP g PROPERTIES (...)
    DROP WORKLOAD GROUP [IF EXISTS] g
    SHOW WORKLOAD GROUPS [LIKE 'pattern']
    CREATE ENCRYPTKEY [IF NOT EXISTS] [db.]k AS "key"
    DROP ENCRYPTKEY [IF EXISTS] [db.]k
    SHOW ENCRYPTKEYS [IN | FROM db] [LIKE 'pattern']

Names may be identifiers or quoted strings, as Doris's `ident_or_text`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot.tokens import TokenType

from server.parser.tokens import TokenCursor


@dataclass
class SqlBlockRuleStmt:
    action: str                     # CREATE | ALTER | DROP
    names: list[str]
    properties: dict[str, str] = field(default_factory=dict)
    if_exists: bool = False         # IF NOT EXISTS for CREATE, IF EXISTS for DROP


@dataclass
class ShowSqlBlockRuleStmt:
    name: str | None


@dataclass
class WorkloadGroupStmt:
    action: str                     # CREATE | ALTER | DROP
    name: str
    properties: dict[str, str] = field(default_factory=dict)
    if_exists: bool = False


@dataclass
class ShowWorkloadGroupsStmt:
    like: str | None


@dataclass
class EncryptKeyStmt:
    action: str                     # CREATE | DROP
    db: str | None
    name: str
    key: str = ""
    if_exists: bool = False


@dataclass
class ShowEncryptKeysStmt:
    db: str | None
    like: str | None


def _flag(cur: TokenCursor, action: str) -> bool:
    if action == "CREATE":
        return cur.accept("IF", "NOT", "EXISTS")
    return action == "DROP" and cur.accept("IF", "EXISTS")


def _properties(cur: TokenCursor) -> dict[str, str]:
    cur.expect("PROPERTIES")
    props = cur.properties()
    cur.expect_end()
    return props


def _block_rule(cur: TokenCursor) -> SqlBlockRuleStmt:
    action = cur.next().text.upper()
    cur.expect("SQL_BLOCK_RULE")
    flag = _flag(cur, action)
    names = [cur.ident_or_text("rule name")]
    if action == "DROP":
        while cur.accept_type(TokenType.COMMA):
            names.append(cur.ident_or_text("rule name"))
        cur.expect_end()
        return SqlBlockRuleStmt(action, names, {}, flag)
    return SqlBlockRuleStmt(action, names, _properties(cur), flag)


def _show_block_rule(cur: TokenCursor) -> ShowSqlBlockRuleStmt:
    cur.expect("SHOW", "SQL_BLOCK_RULE")
    name = cur.ident_or_text("rule name") if cur.accept("FOR") else None
    cur.expect_end()
    return ShowSqlBlockRuleStmt(name)


def _workload_group(cur: TokenCursor) -> WorkloadGroupStmt:
    action = cur.next().text.upper()
    cur.expect("WORKLOAD", "GROUP")
    flag = _flag(cur, action)
    name = cur.ident_or_text("workload group name")
    if action == "DROP":
        cur.expect_end()
        return WorkloadGroupStmt(action, name, {}, flag)
    return WorkloadGroupStmt(action, name, _properties(cur), flag)


def _show_workload_groups(cur: TokenCursor) -> ShowWorkloadGroupsStmt:
    cur.expect("SHOW", "WORKLOAD", "GROUPS")
    like = cur.string("pattern") if cur.accept("LIKE") else None
    cur.expect_end()
    return ShowWorkloadGroupsStmt(like)


def _encrypt_key(cur: TokenCursor) -> EncryptKeyStmt:
    action = cur.next().text.upper()
    cur.expect("ENCRYPTKEY")
    flag = _flag(cur, action)
    db, name = cur.qualified_name()
    key = ""
    if action == "CREATE":
        cur.expect("AS")
        key = cur.string("key string")
    cur.expect_end()
    return EncryptKeyStmt(action, db, name, key, flag)


def _show_encrypt_keys(cur: TokenCursor) -> ShowEncryptKeysStmt:
    cur.expect("SHOW", "ENCRYPTKEYS")
    db = cur.identifier("database name") if cur.accept("IN") or cur.accept("FROM") else None
    like = cur.string("pattern") if cur.accept("LIKE") else None
    cur.expect_end()
    return ShowEncryptKeysStmt(db, like)


OWN_PARSERS = (
    *(((verb, "SQL_BLOCK_RULE"), _block_rule) for verb in ("CREATE", "ALTER", "DROP")),
    (("SHOW", "SQL_BLOCK_RULE"), _show_block_rule),
    *(((verb, "WORKLOAD", "GROUP"), _workload_group) for verb in ("CREATE", "ALTER", "DROP")),
    (("SHOW", "WORKLOAD", "GROUPS"), _show_workload_groups),
    *(((verb, "ENCRYPTKEY"), _encrypt_key) for verb in ("CREATE", "DROP")),
    (("SHOW", "ENCRYPTKEYS"), _show_encrypt_keys),
)
