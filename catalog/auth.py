"""Doris's account model: users, roles, privileges, passwords; journaled like the rest of the catalog.

A *user identity* is `'name'@'host'` (host a pattern: `%` any, `_` one character). Every user
has its own privilege table (Doris's per-user default role) and may hold roles; its effective
privileges are the union of both. A privilege table maps a *scope* to a bit set:

    scope               level       GRANT ... ON
    ("*", "*", "*")     global      *.*.*  (and *.*)
    (ctl, "*", "*")     catalog     ctl.*.*
    (ctl, db, "*")      database    ctl.db.*  (db.*)
    (ctl, db, tbl)      table       ctl.db.tbl  (db.tbl)
    ("resource", name)  resource    RESOURCE 'name'
    ("wg", name)        workload    WORKLOAD GROUP 'name'

The bits are Doris's `Privilege` indexes (Node_priv 0 ... Show_view_priv 9); a check asks for a
*predicate* (Doris's PrivPredicate): a set of bits any one of which suffices (SELECT is
Select_priv or Admin_priv). Built in: `root` (role `operator`: Node_priv + Admin_priv) and
`admin` (role `admin`: Admin_priv), both without a password until one is set.

Passwords are stored only as MySQL's double SHA-1 (`*` + 40 upper-case hex digits, what
`PASSWORD('x')` returns), never in clear. Every change is a journal operation (`APPLY`, applied
by `catalog.Catalog._log`); the whole model is part of the catalog image (`to_dict`/`load`).
"""

from __future__ import annotations

import hashlib
import re
import threading
from dataclasses import dataclass, field
from typing import Callable

from catalog.errors import DdlError, DorisError

PRIVILEGES = ("Node_priv", "Admin_priv", "Grant_priv", "Select_priv", "Load_priv", "Alter_priv",
              "Create_priv", "Drop_priv", "Usage_priv", "Show_view_priv")
BIT = {name.upper(): 1 << i for i, name in enumerate(PRIVILEGES)}
# SHOW PRIVILEGES: where each privilege may be granted and what it is for (Doris's Privilege)
_TABLE_LEVELS = "GLOBAL,CATALOG,DATABASE,TABLE"
PRIVILEGE_INFO = {
    "Node_priv": ("GLOBAL", "Privilege for cluster node operations"),
    "Admin_priv": ("GLOBAL", "Privilege for admin user"),
    "Grant_priv": (f"{_TABLE_LEVELS},RESOURCE,WORKLOAD GROUP", "Privilege for granting privilege"),
    "Select_priv": (_TABLE_LEVELS, "Privilege for select data in tables"),
    "Load_priv": (_TABLE_LEVELS, "Privilege for loading data into tables"),
    "Alter_priv": (_TABLE_LEVELS, "Privilege for alter database or table"),
    "Create_priv": (_TABLE_LEVELS, "Privilege for creating database or table"),
    "Drop_priv": (_TABLE_LEVELS, "Privilege for dropping database or table"),
    "Usage_priv": ("RESOURCE,WORKLOAD GROUP", "Privilege for using resource or workloadGroup"),
    "Show_view_priv": (_TABLE_LEVELS, "Privilege for show create view"),
}
NODE, ADMIN, GRANT = BIT["NODE_PRIV"], BIT["ADMIN_PRIV"], BIT["GRANT_PRIV"]
SELECT, LOAD, ALTER = BIT["SELECT_PRIV"], BIT["LOAD_PRIV"], BIT["ALTER_PRIV"]
CREATE, DROP, USAGE, SHOW_VIEW = BIT["CREATE_PRIV"], BIT["DROP_PRIV"], BIT["USAGE_PRIV"], \
    BIT["SHOW_VIEW_PRIV"]
# Doris's legacy names: ALL / READ_WRITE are the five table privileges, READ_ONLY is SELECT.
ALIASES = {"ALL": SELECT | LOAD | ALTER | CREATE | DROP, "READ_WRITE": SELECT | LOAD | ALTER | CREATE | DROP,
           "READ_ONLY": SELECT}

# Doris's PrivPredicate: any one of these bits satisfies the check.
PREDICATES = {
    "SELECT": SELECT | ADMIN, "LOAD": LOAD | ADMIN, "ALTER": ALTER | ADMIN,
    "CREATE": CREATE | ADMIN, "DROP": DROP | ADMIN, "USAGE": USAGE | ADMIN,
    "SHOW": SELECT | LOAD | ALTER | CREATE | DROP | ADMIN | SHOW_VIEW,
    "SHOW_VIEW": SHOW_VIEW | CREATE | ADMIN,
    "GRANT": GRANT | ADMIN, "ADMIN": ADMIN, "NODE": NODE, "OPERATOR": NODE,
    "ADMIN_OR_NODE": ADMIN | NODE,
    "ALTER_CREATE": ALTER | CREATE | ADMIN,  # RECOVER (PrivPredicate.ALTER_CREATE)
}

INTERNAL = "internal"
ROOT, ADMIN_USER = "root", "admin"
OPERATOR_ROLE, ADMIN_ROLE = "operator", "admin"
GLOBAL_SCOPE = ("*", "*", "*")
MAX_USER_CONNECTIONS = 100   # Doris's default for the per-user property


def priv_names(mask: int) -> str:
    """Doris's PrivBitSet.toString: the names in index order, comma-joined."""
    return ",".join(n for i, n in enumerate(PRIVILEGES) if mask & (1 << i))


def scramble_password(password: str) -> str:
    """MySQL's PASSWORD(): '*' + upper-case hex of SHA1(SHA1(password)); '' stays ''."""
    if password == "":
        return ""
    return "*" + hashlib.sha1(hashlib.sha1(password.encode()).digest()).hexdigest().upper()


def check_scrambled(text: str) -> str:
    """A `IDENTIFIED BY PASSWORD '*...'` value: 41 characters, '*' then 40 hex digits."""
    if not re.fullmatch(r"\*[0-9A-Fa-f]{40}", text):
        raise DdlError("Password hash should be a 41-digit hexadecimal number")
    return text.upper()


def host_matches(pattern: str, host: str) -> bool:
    if pattern in ("%", ""):
        return True
    regex = "".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, host, re.IGNORECASE) is not None


@dataclass
class PrivTable:
    """scope -> privilege bits (see the module docstring for scopes)."""

    entries: dict[tuple, int] = field(default_factory=dict)

    def grant(self, scope: tuple, mask: int) -> None:
        self.entries[scope] = self.entries.get(scope, 0) | mask

    def revoke(self, scope: tuple, mask: int) -> None:
        left = self.entries.get(scope, 0) & ~mask
        if left:
            self.entries[scope] = left
        else:
            self.entries.pop(scope, None)

    def to_list(self) -> list:
        return [[list(s), m] for s, m in self.entries.items()]

    @classmethod
    def from_list(cls, items: list) -> "PrivTable":
        return cls({tuple(s): m for s, m in items})


@dataclass
class Role:
    name: str
    comment: str = ""
    privs: PrivTable = field(default_factory=PrivTable)

    def to_dict(self) -> dict:
        return {"name": self.name, "comment": self.comment, "privs": self.privs.to_list()}

    @classmethod
    def from_dict(cls, d: dict) -> "Role":
        return cls(d["name"], d.get("comment", ""), PrivTable.from_list(d["privs"]))


@dataclass
class User:
    name: str
    host: str
    password: str = ""                 # '*HEX' double SHA-1, or '' for none
    roles: list[str] = field(default_factory=list)
    privs: PrivTable = field(default_factory=PrivTable)
    comment: str = ""
    properties: dict = field(default_factory=dict)

    @property
    def identity(self) -> str:
        return f"'{self.name}'@'{self.host}'"

    def to_dict(self) -> dict:
        return {"name": self.name, "host": self.host, "password": self.password,
                "roles": self.roles, "privs": self.privs.to_list(), "comment": self.comment,
                "properties": self.properties}

    @classmethod
    def from_dict(cls, d: dict) -> "User":
        return cls(d["name"], d["host"], d.get("password", ""), list(d.get("roles", [])),
                   PrivTable.from_list(d.get("privs", [])), d.get("comment", ""),
                   dict(d.get("properties", {})))


def _default_privs() -> PrivTable:
    """What Doris gives every new user: SELECT on information_schema and mysql."""
    t = PrivTable()
    t.grant((INTERNAL, "information_schema", "*"), SELECT)
    t.grant((INTERNAL, "mysql", "*"), SELECT)
    return t


class Auth:
    """The users and roles; `log(op, data)` journals and applies a change (Catalog._log)."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.users: dict[tuple[str, str], User] = {}
        self.roles: dict[str, Role] = {}
        self.log: Callable[[str, dict], None] = lambda op, data: APPLY[op](self, data)
        # the names of the SQL block rules that exist (the catalog's, set by Catalog)
        self.block_rule_names: Callable[[], object] = lambda: ()
        self._builtins()

    def _builtins(self) -> None:
        operator = Role(OPERATOR_ROLE)
        operator.privs.grant(GLOBAL_SCOPE, NODE | ADMIN)
        admin = Role(ADMIN_ROLE)
        admin.privs.grant(GLOBAL_SCOPE, ADMIN)
        self.roles = {OPERATOR_ROLE: operator, ADMIN_ROLE: admin}
        self.users = {(ROOT, "%"): User(ROOT, "%", roles=[OPERATOR_ROLE], privs=_default_privs(),
                                        comment="ROOT"),
                      (ADMIN_USER, "%"): User(ADMIN_USER, "%", roles=[ADMIN_ROLE],
                                              privs=_default_privs(), comment="ADMIN")}

    # -- image ---------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        with self.lock:
            return {"users": [u.to_dict() for u in self.users.values()],
                    "roles": [r.to_dict() for r in self.roles.values()]}

    def load(self, state: dict | None) -> None:
        if not state:
            return
        with self.lock:
            self.users = {(u.name, u.host): u for u in map(User.from_dict, state["users"])}
            self.roles = {r.name: r for r in map(Role.from_dict, state["roles"])}

    # -- lookups -------------------------------------------------------------------------------
    def find_login(self, name: str, remote_host: str) -> User | None:
        """The account a client connecting as `name` from `remote_host` logs in as: the exact
        host first, then patterns, the most specific (fewest wildcards, longest) first."""
        with self.lock:
            candidates = [u for (n, _), u in self.users.items()
                          if n == name and host_matches(u.host, remote_host)]
        candidates.sort(key=lambda u: (u.host != remote_host, u.host.count("%"), -len(u.host)))
        return candidates[0] if candidates else None

    def get_user(self, name: str, host: str) -> User | None:
        return self.users.get((name, host))

    def effective(self, user: User) -> dict[tuple, int]:
        """scope -> bits granted to the user directly or through its roles."""
        with self.lock:
            out = dict(user.privs.entries)
            for r in user.roles:
                role = self.roles.get(r)
                if role is None:
                    continue
                for scope, mask in role.privs.entries.items():
                    out[scope] = out.get(scope, 0) | mask
            return out

    def role_users(self, role: str) -> list[str]:
        return sorted(u.identity for u in self.users.values() if role in u.roles)

    # -- changes (validated here, journaled through self.log) -----------------------------------
    def create_user(self, name: str, host: str, password: str, roles: list[str],
                    if_not_exists: bool, comment: str = "") -> None:
        with self.lock:
            if (name, host) in self.users:
                if if_not_exists:
                    return
                raise DdlError(f"User '{name}'@'{host}' already exist")
            for r in roles:
                self._role(r)
            self.log("auth_create_user", {"name": name, "host": host, "password": password,
                                          "roles": roles, "comment": comment})

    def drop_user(self, name: str, host: str, if_exists: bool) -> None:
        with self.lock:
            if (name, host) not in self.users:
                if if_exists:
                    return
                raise DdlError(f"user '{name}'@'{host}' does not exist")
            if name in (ROOT, ADMIN_USER):
                raise DdlError(f"Can not drop user {name}")
            self.log("auth_drop_user", {"name": name, "host": host})

    def set_password(self, name: str, host: str, password: str) -> None:
        with self.lock:
            self._user(name, host)
            self.log("auth_set_password", {"name": name, "host": host, "password": password})

    def set_initial_root_password(self, scrambled: str) -> None:
        """`initial_root_password` from the config: journaled only when it changes."""
        scrambled = check_scrambled(scrambled.strip())
        if self.users[(ROOT, "%")].password != scrambled:
            self.set_password(ROOT, "%", scrambled)

    def alter_user(self, name: str, host: str, password: str | None, comment: str | None,
                   if_exists: bool) -> None:
        with self.lock:
            if (name, host) not in self.users and if_exists:
                return
            self._user(name, host)
            self.log("auth_alter_user", {"name": name, "host": host, "password": password,
                                         "comment": comment})

    def create_role(self, name: str, if_not_exists: bool, comment: str = "") -> None:
        with self.lock:
            if name in self.roles:
                if if_not_exists:
                    return
                raise DdlError(f"Role {name} already exists")
            self.log("auth_create_role", {"name": name, "comment": comment})

    def drop_role(self, name: str, if_exists: bool) -> None:
        with self.lock:
            if name not in self.roles:
                if if_exists:
                    return
                raise DdlError(f"Role {name} does not exist")
            if name in (OPERATOR_ROLE, ADMIN_ROLE):
                raise DdlError(f"Can not drop role {name}")
            self.log("auth_drop_role", {"name": name})

    def change_privs(self, grant: bool, grantee: dict, scope: tuple, mask: int) -> None:
        """GRANT / REVOKE privileges on a scope to a user ({"name", "host"}) or {"role"}."""
        with self.lock:
            self._grantee(grantee)
            if not grant and not self._grantee(grantee).privs.entries.get(scope, 0) & mask:
                who = grantee.get("role") or f"'{grantee['name']}'@'{grantee['host']}'"
                raise DdlError(f"Can not revoke privilege from {who}: it has no such privilege "
                               f"on {_scope_text(scope)}")
            self.log("auth_grant" if grant else "auth_revoke",
                     {"grantee": grantee, "scope": list(scope), "mask": mask})

    def change_roles(self, grant: bool, name: str, host: str, roles: list[str]) -> None:
        with self.lock:
            self._user(name, host)
            for r in roles:
                self._role(r)
            if name == ROOT and not grant and OPERATOR_ROLE in roles:
                raise DdlError("Can not revoke role operator from root")
            self.log("auth_grant_role" if grant else "auth_revoke_role",
                     {"name": name, "host": host, "roles": roles})

    def set_property(self, name: str, key: str, value: str) -> None:
        with self.lock:
            if not any(n == name for n, _ in self.users):
                raise DdlError(f"Unknown user: {name}")
            if key == "sql_block_rules":  # rule names, comma-separated (UserProperty)
                names = [n.strip() for n in value.split(",") if n.strip()]
                for n in names:
                    if n not in self.block_rule_names():
                        raise DdlError(f"the sql block rule {n} not exist")
                self.log("auth_set_property", {"name": name, "key": key,
                                               "value": ",".join(names)})
                return
            if key != "max_user_connections":
                raise DdlError(f"Unknown user property({key})")
            try:
                number = int(value)
            except ValueError:
                raise DdlError(f"{key} is not number") from None
            if number <= 0 or number > 10000:
                raise DdlError(f"{key} is not valid, must between 1 and 10000")
            self.log("auth_set_property", {"name": name, "key": key, "value": number})

    def sql_block_rules(self, name: str) -> list[str]:
        """The SQL block rules bound to the account `name` (user property sql_block_rules)."""
        for (n, _), u in list(self.users.items()):
            if n == name and u.properties.get("sql_block_rules"):
                return str(u.properties["sql_block_rules"]).split(",")
        return []

    def max_user_connections(self, name: str) -> int:
        with self.lock:
            for (n, _), u in self.users.items():
                if n == name and "max_user_connections" in u.properties:
                    return int(u.properties["max_user_connections"])
        return MAX_USER_CONNECTIONS

    # -- helpers -------------------------------------------------------------------------------
    def _user(self, name: str, host: str) -> User:
        user = self.users.get((name, host))
        if user is None:
            raise DdlError(f"user '{name}'@'{host}' does not exist")
        return user

    def _role(self, name: str) -> Role:
        role = self.roles.get(name)
        if role is None:
            raise DdlError(f"Role {name} does not exist")
        return role

    def _grantee(self, grantee: dict):
        if "role" in grantee:
            return self._role(grantee["role"])
        return self._user(grantee["name"], grantee["host"])


def _scope_text(scope: tuple) -> str:
    if scope[0] == "resource":
        return f"resource {scope[1]}"
    if scope[0] == "wg":
        return f"workload group {scope[1]}"
    return ".".join(scope)


# -- journal operations ------------------------------------------------------------------------
def _apply_create_user(auth: Auth, d: dict) -> None:
    auth.users[(d["name"], d["host"])] = User(d["name"], d["host"], d["password"],
                                              list(d["roles"]), _default_privs(),
                                              d.get("comment", ""))


def _apply_drop_user(auth: Auth, d: dict) -> None:
    auth.users.pop((d["name"], d["host"]), None)


def _apply_set_password(auth: Auth, d: dict) -> None:
    auth.users[(d["name"], d["host"])].password = d["password"]


def _apply_alter_user(auth: Auth, d: dict) -> None:
    user = auth.users[(d["name"], d["host"])]
    if d.get("password") is not None:
        user.password = d["password"]
    if d.get("comment") is not None:
        user.comment = d["comment"]


def _apply_create_role(auth: Auth, d: dict) -> None:
    auth.roles[d["name"]] = Role(d["name"], d.get("comment", ""))


def _apply_drop_role(auth: Auth, d: dict) -> None:
    auth.roles.pop(d["name"], None)
    for u in auth.users.values():
        if d["name"] in u.roles:
            u.roles.remove(d["name"])


def _apply_grant(auth: Auth, d: dict) -> None:
    auth._grantee(d["grantee"]).privs.grant(tuple(d["scope"]), d["mask"])


def _apply_revoke(auth: Auth, d: dict) -> None:
    auth._grantee(d["grantee"]).privs.revoke(tuple(d["scope"]), d["mask"])


def _apply_grant_role(auth: Auth, d: dict) -> None:
    user = auth.users[(d["name"], d["host"])]
    user.roles.extend(r for r in d["roles"] if r not in user.roles)


def _apply_revoke_role(auth: Auth, d: dict) -> None:
    user = auth.users[(d["name"], d["host"])]
    user.roles = [r for r in user.roles if r not in d["roles"]]


def _apply_set_property(auth: Auth, d: dict) -> None:
    for (n, _), u in auth.users.items():
        if n == d["name"]:
            u.properties[d["key"]] = d["value"]


APPLY: dict[str, Callable[[Auth, dict], None]] = {
    "auth_create_user": _apply_create_user, "auth_drop_user": _apply_drop_user,
    "auth_set_password": _apply_set_password, "auth_alter_user": _apply_alter_user,
    "auth_create_role": _apply_create_role, "auth_drop_role": _apply_drop_role,
    "auth_grant": _apply_grant, "auth_revoke": _apply_revoke,
    "auth_grant_role": _apply_grant_role, "auth_revoke_role": _apply_revoke_role,
    "auth_set_property": _apply_set_property,
}


def catalog_apply() -> dict:
    """The operations as the catalog's `_APPLY` table wants them: (catalog, data)."""
    return {op: (lambda cat, data, f=f: f(cat.auth, data)) for op, f in APPLY.items()}


class AccessDenied(DorisError):
    """Doris's privilege errors: 1142 (table), 1044 (database), 1227 (global), 1045 (login)."""

    sqlstate = "42000"

    def __init__(self, message: str, code: int, prefix: bool = True):
        super().__init__(message)
        self.code = code
        self.doris_prefix = prefix

