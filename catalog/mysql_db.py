"""The `mysql` database: Doris's read-only system database kept for MySQL tools.

Doris 2.1 (MysqlDb / MysqlDBTable) has `procs_priv`, always empty, and `user` (added for
DBeaver's and DataGrip's user lists: Doris's SchemaUserScanner columns, a row per account with
its global privileges as Y/N and its max_user_connections; a user without GRANT or ADMIN sees
its own rows only), so that tools which read MySQL's grant tables find them; users get SELECT
on `internal.mysql` by default (catalog/auth.py). Like information_schema it is listed by
SHOW DATABASES, can be USEd, its tables are described and queried, and nothing can be
created, changed or dropped in it.
"""

from __future__ import annotations

import pyarrow as pa

from catalog import access
from catalog.auth import GLOBAL_SCOPE, PRIVILEGES
from storage.types import DataType

NAME = "mysql"

_CHAR1 = DataType("CHAR", length=1)
_TEXT = DataType("VARCHAR", length=65533)
_POLICY = ("expiration_seconds", "password_creation_time", "history_num", "history_passwords",
           "num_failed_login", "password_lock_seconds", "failed_login_counter", "lock_time")
# Doris's MysqlDBTable / SchemaUserScanner columns
_COLUMNS = {
    "procs_priv": [(name, DataType("CHAR", length=n)) for name, n in (
        ("Host", 60), ("Db", 64), ("User", 32), ("Routine_name", 64), ("Routine_type", 9),
        ("Grantor", 93), ("Proc_priv", 16), ("Timestamp", 1))],
    "user": [("Host", DataType("CHAR", length=255)), ("User", DataType("CHAR", length=32)),
             *[(p, _CHAR1) for p in PRIVILEGES[:9]],
             ("Show_view_priv", _CHAR1), ("Cluster_usage_priv", _CHAR1),
             ("Stage_usage_priv", _CHAR1), ("ssl_type", DataType("CHAR", length=9)),
             ("ssl_cipher", _TEXT), ("x509_issuer", _TEXT), ("x509_subject", _TEXT),
             *[(c, DataType("BIGINT")) for c in ("max_questions", "max_updates",
                                                  "max_connections", "max_user_connections")],
             ("plugin", DataType("CHAR", length=64)), ("authentication_string", _TEXT),
             *[(f"password_policy.{p}", DataType("VARCHAR", length=32)) for p in _POLICY]],
}


def table_names() -> list[str]:
    return sorted(_COLUMNS)


def columns_of(name: str) -> list[tuple[str, DataType]] | None:
    return _COLUMNS.get(name.lower())


def schema_of(name: str) -> pa.Schema | None:
    columns = columns_of(name)
    return None if columns is None else pa.schema([pa.field(c, t.arrow()) for c, t in columns])


def build(name: str, catalog, variables, view_columns=None) -> pa.Table:
    """The rows of mysql.<name> now: `user`'s accounts, none in the others (Doris keeps them
    empty)."""
    schema = schema_of(name)
    if name.lower() != "user":
        return schema.empty_table()
    rows = _user_rows(catalog.auth)
    return pa.table({f.name: pa.array([r[i] for r in rows], f.type)
                     for i, f in enumerate(schema)}, schema=schema)


def _user_rows(auth) -> list[tuple]:
    current = access.CURRENT.get()
    sees_all = current is None or current.check_global("GRANT")
    rows = []
    with auth.lock:
        users = sorted(auth.users.values(), key=lambda u: (u.name, u.host))
        for u in users:
            if not sees_all and u.name != current.name:
                continue
            granted = auth.effective(u).get(GLOBAL_SCOPE, 0)
            flags = ["Y" if granted & (1 << i) else "N" for i in range(len(PRIVILEGES))]
            rows.append((u.host, u.name, *flags[:9], flags[9], "N", "N", "", "", "", "",
                         0, 0, 0, int(auth.max_user_connections(u.name)), "", "",
                         *[""] * len(_POLICY)))
    return rows
