"""Account management handlers: CREATE/ALTER/DROP USER, SET PASSWORD, CREATE/DROP ROLE,
GRANT/REVOKE, SHOW [ALL] GRANTS, SHOW ROLES, SET/SHOW PROPERTY.

Each checks the caller's privilege first as Doris does (GRANT_PRIV for account changes, ADMIN
for properties; anyone may change their own password and see their own grants), then changes
the model through `catalog.auth.Auth`, which journals the change.
"""

from __future__ import annotations

from catalog.access import Access
from catalog.auth import (GLOBAL_SCOPE, INTERNAL, NODE, ROOT, Auth, User, priv_names)
from catalog.auth_statements import (AlterUserStmt, CreateRoleStmt, CreateUserStmt, DropRoleStmt,
                                     DropUserStmt, GrantStmt, SetPasswordStmt, SetPropertyStmt,
                                     ShowGrantsStmt, ShowPropertyStmt, ShowRolesStmt)
from catalog.auth import AccessDenied
from catalog.errors import DdlError
from server.handlers.context import StatementContext
from server.results import OkResult, RowsResult, text_columns

GRANTS_COLUMNS = ["UserIdentity", "Comment", "Password", "Roles", "GlobalPrivs", "CatalogPrivs",
                  "DatabasePrivs", "TablePrivs", "ColPrivs", "ResourcePrivs",
                  "WorkloadGroupPrivs"]
ROLES_COLUMNS = ["Name", "Comment", "Users", "GlobalPrivs", "CatalogPrivs", "DatabasePrivs",
                 "TablePrivs", "ResourcePrivs", "WorkloadGroupPrivs"]


def _auth(ctx: StatementContext) -> Auth:
    return ctx.catalog.auth


def _access(ctx: StatementContext) -> Access:
    return ctx.session.access


def _require_grant(ctx: StatementContext) -> None:
    _access(ctx).require_global("GRANT")


def create_user(stmt: CreateUserStmt, ctx: StatementContext) -> OkResult:
    _require_grant(ctx)
    _auth(ctx).create_user(stmt.user.name, stmt.user.host, stmt.password, stmt.roles,
                           stmt.if_not_exists, stmt.comment)
    return OkResult()


def alter_user(stmt: AlterUserStmt, ctx: StatementContext) -> OkResult:
    _require_grant(ctx)
    _auth(ctx).alter_user(stmt.user.name, stmt.user.host, stmt.password, stmt.comment,
                          stmt.if_exists)
    return OkResult()


def drop_user(stmt: DropUserStmt, ctx: StatementContext) -> OkResult:
    _require_grant(ctx)
    _auth(ctx).drop_user(stmt.user.name, stmt.user.host, stmt.if_exists)
    return OkResult()


def set_password(stmt: SetPasswordStmt, ctx: StatementContext) -> OkResult:
    me = _access(ctx).user
    name, host = (me.name, me.host) if stmt.user is None else (stmt.user.name, stmt.user.host)
    if (name, host) != (me.name, me.host):
        _require_grant(ctx)
        if name == ROOT and me.name != ROOT:
            raise AccessDenied("Access denied; you need (at least one of) the (GRANT) "
                               "privilege(s) for this operation", 1227)
    _auth(ctx).set_password(name, host, stmt.password)
    return OkResult()


def create_role(stmt: CreateRoleStmt, ctx: StatementContext) -> OkResult:
    _require_grant(ctx)
    _auth(ctx).create_role(stmt.role, stmt.if_not_exists, stmt.comment)
    return OkResult()


def drop_role(stmt: DropRoleStmt, ctx: StatementContext) -> OkResult:
    _require_grant(ctx)
    _auth(ctx).drop_role(stmt.role, stmt.if_exists)
    return OkResult()


def grant(stmt: GrantStmt, ctx: StatementContext) -> OkResult:
    access = _access(ctx)
    if stmt.roles:
        _require_grant(ctx)
        _auth(ctx).change_roles(stmt.grant, stmt.user.name, stmt.user.host, stmt.roles)
        return OkResult()
    scope = stmt.scope
    if len(scope) == 3 and scope != GLOBAL_SCOPE and scope[0] == INTERNAL and scope[1] != "*":
        ok = access.check_db(scope[1], "GRANT") if scope[2] == "*" else \
            access.check_tbl(scope[1], scope[2], "GRANT")
        if not ok:
            access.require_global("GRANT")
    else:
        access.require_global("GRANT")
    if stmt.mask & NODE:
        access.require_global("OPERATOR", "NODE")
    grantee = {"role": stmt.role} if stmt.role is not None else \
        {"name": stmt.user.name, "host": stmt.user.host}
    if stmt.role is None and stmt.user.name == ROOT and not stmt.grant:
        raise DdlError("Can not revoke privileges from root")
    _auth(ctx).change_privs(stmt.grant, grantee, scope, stmt.mask)
    return OkResult()


# -- SHOW ----------------------------------------------------------------------------------------
def _join(items: list[str]) -> str | None:
    return "; ".join(sorted(items)) or None


def priv_columns(privs: dict[tuple, int], with_cols: bool) -> list[str | None]:
    """GlobalPrivs, CatalogPrivs, DatabasePrivs, TablePrivs, [ColPrivs,] ResourcePrivs,
    WorkloadGroupPrivs as Doris prints them (NULL where empty)."""
    glob = priv_names(privs.get(GLOBAL_SCOPE, 0)) or None
    ctl, db, tbl, res, wg = [], [], [], [], []
    for scope, mask in privs.items():
        text = priv_names(mask)
        if not text or scope == GLOBAL_SCOPE:
            continue
        if scope[0] == "resource":
            res.append(f"{scope[1]}: {text}")
        elif scope[0] == "wg":
            wg.append(f"{scope[1]}: {text}")
        elif scope[1] == "*":
            ctl.append(f"{scope[0]}: {text}")
        elif scope[2] == "*":
            db.append(f"{scope[0]}.{scope[1]}: {text}")
        else:
            tbl.append(f"{scope[0]}.{scope[1]}.{scope[2]}: {text}")
    out = [glob, _join(ctl), _join(db), _join(tbl)]
    if with_cols:
        out.append(None)
    return out + [_join(res), _join(wg)]


def _grants_row(auth: Auth, user: User) -> tuple:
    return (user.identity, user.comment, "Yes" if user.password else "No",
            ",".join(user.roles), *priv_columns(auth.effective(user), True))


def show_grants(stmt: ShowGrantsStmt, ctx: StatementContext) -> RowsResult:
    access, auth = _access(ctx), _auth(ctx)
    with auth.lock:
        if stmt.all:
            access.require_global("GRANT")
            users = sorted(auth.users.values(), key=lambda u: (u.name, u.host))
        elif stmt.user is not None and (stmt.user.name, stmt.user.host) != \
                (access.user.name, access.user.host):
            access.require_global("GRANT")
            user = auth.get_user(stmt.user.name, stmt.user.host)
            if user is None:
                raise DdlError(f"User: {stmt.user} does not exist")
            users = [user]
        else:
            users = [access.user]
        rows = [_grants_row(auth, u) for u in users]
    return text_columns(GRANTS_COLUMNS, rows)


def show_roles(stmt: ShowRolesStmt, ctx: StatementContext) -> RowsResult:
    _require_grant(ctx)
    auth = _auth(ctx)
    with auth.lock:
        rows = [(r.name, r.comment, ", ".join(auth.role_users(r.name)) or None,
                 *priv_columns(r.privs.entries, False))
                for r in sorted(auth.roles.values(), key=lambda r: r.name)]
    return text_columns(ROLES_COLUMNS, rows)


def set_property(stmt: SetPropertyStmt, ctx: StatementContext) -> OkResult:
    _access(ctx).require_global("ADMIN")
    _auth(ctx).set_property(stmt.user or _access(ctx).user.name, stmt.key, stmt.value)
    return OkResult()


def show_property(stmt: ShowPropertyStmt, ctx: StatementContext) -> RowsResult:
    access = _access(ctx)
    name = stmt.user or access.user.name
    if name != access.user.name:
        access.require_global("GRANT")
    if not any(n == name for n, _ in _auth(ctx).users):
        raise DdlError(f"Unknown user: {name}")
    return text_columns(["Key", "Value"],
                        [("max_user_connections", _auth(ctx).max_user_connections(name)),
                         ("sql_block_rules", ",".join(_auth(ctx).sql_block_rules(name)))])


AUTH_HANDLERS = {
    CreateUserStmt: create_user, AlterUserStmt: alter_user, DropUserStmt: drop_user,
    SetPasswordStmt: set_password, CreateRoleStmt: create_role, DropRoleStmt: drop_role,
    GrantStmt: grant, ShowGrantsStmt: show_grants, ShowRolesStmt: show_roles,
    SetPropertyStmt: set_property, ShowPropertyStmt: show_property,
}
