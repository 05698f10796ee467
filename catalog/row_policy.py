"""Row policies: filters a user (or a role's users) sees a table through (Doris's RowPolicy).

    CREATE ROW POLICY [IF NOT EXISTS] p ON db.t AS {RESTRICTIVE | PERMISSIVE}
        TO {user | ROLE role} USING (predicate)
    DROP ROW POLICY [IF EXISTS] p ON db.t [FOR user | ROLE role]
    SHOW ROW POLICY [FOR user | ROLE role]

A policy names its table by id (a rename keeps it); it applies to the user it names, or to
every user holding the role it names, when they read the table: the table then stands for
`(SELECT * FROM t WHERE <filter>)` (planner/binder.py). A user's policies on one table
combine as Doris's CheckPolicy does: the RESTRICTIVE ones AND-ed, the PERMISSIVE ones OR-ed,
both groups AND-ed. A user with no policy on the table sees every row. root and admin cannot
be given a policy. Journal operations (entries of `catalog/catalog.py:_APPLY`):

    op                  data
    create_row_policy   {policy: {...}}
    drop_row_policy     {table_id, name, user, role}
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from catalog.errors import AnalysisError, DorisError

if TYPE_CHECKING:
    from catalog.catalog import Catalog

RESERVED_USERS = ("root", "admin")


@dataclass
class RowPolicy:
    name: str
    table_id: int
    filter_type: str          # RESTRICTIVE | PERMISSIVE
    predicate: str            # the USING expression's SQL text
    user: str | None          # the user's name, or
    role: str | None          # the role's name
    origin: str               # the CREATE statement, as written

    def to_dict(self) -> dict:
        return asdict(self)


class PolicyExists(DorisError):
    def __init__(self, name: str):
        super().__init__(f"the policy {name} already create")


class UnknownPolicy(DorisError):
    def __init__(self, name: str):
        super().__init__(f"the policy {name} not exist")


def create(cat: Catalog, policy: RowPolicy, if_not_exists: bool) -> None:
    if policy.user is not None and policy.user.lower() in RESERVED_USERS:
        raise AnalysisError("Cannot create row policy for root or admin user")
    with cat.lock:
        if policy.user is not None and not any(u.name == policy.user
                                               for u in cat.auth.users.values()):
            raise AnalysisError(f"user {policy.user} does not exist")
        if policy.role is not None and policy.role not in cat.auth.roles:
            raise AnalysisError(f"role {policy.role} does not exist")
        if any(_same(p, policy.table_id, policy.name, policy.user, policy.role)
               for p in cat.row_policies):
            if if_not_exists:
                return
            raise PolicyExists(policy.name)
        cat._log("create_row_policy", {"policy": policy.to_dict()})


def drop(cat: Catalog, table_id: int, name: str, user: str | None, role: str | None,
         if_exists: bool) -> None:
    with cat.lock:
        if not any(_matches(p, table_id, name, user, role) for p in cat.row_policies):
            if if_exists:
                return
            raise UnknownPolicy(name)
        cat._log("drop_row_policy", {"table_id": table_id, "name": name, "user": user,
                                     "role": role})


def filters_for(cat: Catalog, table_id: int, user: str, roles: list[str]) -> str | None:
    """The SQL filter a user reads the table through, None when no policy applies."""
    with cat.lock:
        mine = [p for p in cat.row_policies if p.table_id == table_id and
                (p.user == user or (p.role is not None and p.role in roles))]
    if not mine:
        return None
    restrictive = [f"({p.predicate})" for p in mine if p.filter_type == "RESTRICTIVE"]
    permissive = [f"({p.predicate})" for p in mine if p.filter_type == "PERMISSIVE"]
    parts = list(restrictive)
    if permissive:
        parts.append("(" + " OR ".join(permissive) + ")")
    return " AND ".join(parts)


def _same(p: RowPolicy, table_id: int, name: str, user: str | None, role: str | None) -> bool:
    return p.table_id == table_id and p.name == name and p.user == user and p.role == role


def _matches(p: RowPolicy, table_id: int, name: str, user: str | None,
             role: str | None) -> bool:
    """DROP's match: the name on the table, and the user or role when one is given."""
    return p.table_id == table_id and p.name == name and \
        (user is None or p.user == user) and (role is None or p.role == role)


def _apply_create(cat: Catalog, data: dict) -> None:
    cat.row_policies.append(RowPolicy(**data["policy"]))


def _apply_drop(cat: Catalog, data: dict) -> None:
    cat.row_policies = [p for p in cat.row_policies
                        if not _matches(p, data["table_id"], data["name"], data["user"],
                                        data["role"])]


APPLY = {"create_row_policy": _apply_create, "drop_row_policy": _apply_drop}
