"""Statement objects of account management (parsed by server/parser/auth.py).

    CREATE USER [IF NOT EXISTS] 'u'@'h' [IDENTIFIED BY [PASSWORD] 'pw'] [DEFAULT ROLE 'r'] [COMMENT 'c']
    ALTER USER [IF EXISTS] 'u'@'h' [IDENTIFIED BY [PASSWORD] 'pw'] [COMMENT 'c']
    DROP USER [IF EXISTS] 'u'@'h'
    SET PASSWORD [FOR 'u'@'h'] = PASSWORD('pw') | '*HEX'
    CREATE ROLE [IF NOT EXISTS] r [COMMENT 'c'] / DROP ROLE [IF EXISTS] r
    GRANT privs ON [ctl.]db.tbl | RESOURCE 'r' | WORKLOAD GROUP 'g' TO 'u'@'h' | ROLE 'r'
    GRANT 'r1', 'r2' TO 'u'@'h'           (and REVOKE ... FROM ...)
    SHOW [ALL] GRANTS [FOR 'u'@'h'], SHOW ROLES
    SET PROPERTY [FOR 'u'] 'max_user_connections' = 'n', SHOW PROPERTY [FOR 'u']
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class UserIdent:
    name: str
    host: str = "%"

    def __str__(self) -> str:
        return f"'{self.name}'@'{self.host}'"


@dataclass
class CreateUserStmt:
    user: UserIdent
    password: str = ""          # already scrambled ('*HEX') or ''
    roles: list[str] = field(default_factory=list)
    if_not_exists: bool = False
    comment: str = ""


@dataclass
class AlterUserStmt:
    user: UserIdent
    password: str | None = None
    comment: str | None = None
    if_exists: bool = False


@dataclass
class DropUserStmt:
    user: UserIdent
    if_exists: bool = False


@dataclass
class SetPasswordStmt:
    user: UserIdent | None      # None: the current user
    password: str               # scrambled


@dataclass
class CreateRoleStmt:
    role: str
    if_not_exists: bool = False
    comment: str = ""


@dataclass
class DropRoleStmt:
    role: str
    if_exists: bool = False


@dataclass
class GrantStmt:
    grant: bool                 # False: REVOKE
    mask: int = 0               # privileges (catalog/auth.py bits); 0 for a role grant
    scope: tuple = ()           # see catalog/auth.py
    user: UserIdent | None = None
    role: str | None = None     # grantee role (TO ROLE 'r')
    roles: list[str] = field(default_factory=list)  # GRANT 'r1', 'r2' TO user


@dataclass
class ShowGrantsStmt:
    all: bool = False
    user: UserIdent | None = None


@dataclass
class ShowRolesStmt:
    pass


@dataclass
class SetPropertyStmt:
    user: str | None
    key: str
    value: str


@dataclass
class ShowPropertyStmt:
    user: str | None
