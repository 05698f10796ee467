"""Privilege checks for one logged-in user (Doris's AccessControllerManager.check*Priv).

`Access(auth, user, remote_ip)` answers "may this user do X on Y" from the user's effective
privileges (its own plus its roles'), at the level Doris checks:

    check_global(pred)            *.*.*
    check_db(db, pred)            global, catalog `internal`, or the database
    check_tbl(db, tbl, pred)      ... or the table
    visible_db / visible_tbl      SHOW: any privilege on the object (a database is visible
                                  when any of its tables is)

and raises Doris's errors (`require_*`): 1142 `<CMD> command denied to user 'u'@'ip' for table
'db: tbl'`, 1044 `Access denied for user 'u' to database 'db'`, 1227 `Access denied; you need
(at least one of) the (ADMIN) privilege(s) for this operation`.

The user running the current statement is kept in a context variable (`CURRENT`), set by the
session for the statement's thread; code that lists catalog objects (SHOW, information_schema)
filters with `visible_*()` which allow everything when no user is set (internal work).
"""

from __future__ import annotations

import contextvars

from catalog.auth import INTERNAL, PREDICATES, AccessDenied, Auth, User

CURRENT: contextvars.ContextVar["Access | None"] = contextvars.ContextVar("access", default=None)
ALWAYS_VISIBLE = {"information_schema", "mysql"}


class Access:
    def __init__(self, auth: Auth, user: User, remote_ip: str):
        self.auth, self.user, self.remote_ip = auth, user, remote_ip

    @property
    def name(self) -> str:
        return self.user.name

    def _privs(self) -> dict[tuple, int]:
        return self.auth.effective(self.user)

    # -- checks --------------------------------------------------------------------------------
    def check_global(self, pred: str) -> bool:
        return bool(self._privs().get(("*", "*", "*"), 0) & PREDICATES[pred])

    def check_db(self, db: str, pred: str) -> bool:
        want, privs = PREDICATES[pred], self._privs()
        return any(privs.get(s, 0) & want for s in
                   (("*", "*", "*"), (INTERNAL, "*", "*"), (INTERNAL, db, "*")))

    def check_tbl(self, db: str, tbl: str, pred: str) -> bool:
        return self.check_db(db, pred) or bool(
            self._privs().get((INTERNAL, db, tbl), 0) & PREDICATES[pred])

    def check_resource(self, name: str, pred: str = "USAGE") -> bool:
        privs, want = self._privs(), PREDICATES[pred]
        return self.check_global(pred) or any(privs.get(s, 0) & want for s in
                                              (("resource", name), ("resource", "%")))

    def visible_db(self, db: str) -> bool:
        if db.lower() in ALWAYS_VISIBLE or self.check_db(db, "SHOW"):
            return True
        want = PREDICATES["SHOW"]
        return any(s[0] == INTERNAL and s[1] == db and m & want
                   for s, m in self._privs().items() if len(s) == 3)

    def visible_tbl(self, db: str, tbl: str) -> bool:
        return db.lower() in ALWAYS_VISIBLE or self.check_tbl(db, tbl, "SHOW")

    # -- checks that raise Doris's errors ------------------------------------------------------
    def require_global(self, pred: str, shown: str | None = None) -> None:
        if not self.check_global(pred):
            raise AccessDenied("Access denied; you need (at least one of) the "
                               f"({shown or pred}) privilege(s) for this operation", 1227)

    def require_db(self, db: str, pred: str) -> None:
        if not self.check_db(db, pred):
            raise AccessDenied(f"Access denied for user '{self.name}' to database '{db}'", 1044)

    def require_tbl(self, db: str, tbl: str, pred: str, command: str | None = None) -> None:
        if not self.check_tbl(db, tbl, pred):
            raise AccessDenied(f"{command or pred} command denied to user '{self.name}'@"
                               f"'{self.remote_ip}' for table '{INTERNAL}: {db}: {tbl}'", 1142)

    def require_visible_db(self, db: str) -> None:
        if not self.visible_db(db):
            raise AccessDenied(f"Access denied for user '{self.name}' to database '{db}'", 1044)


def visible_db(db: str) -> bool:
    access = CURRENT.get()
    return access is None or access.visible_db(db)


def visible_tbl(db: str, tbl: str) -> bool:
    access = CURRENT.get()
    return access is None or access.visible_tbl(db, tbl)
