"""Encrypt keys (Doris's EncryptKey): CREATE ENCRYPTKEY [db.]k AS "secret", DROP ENCRYPTKEY
[IF EXISTS] [db.]k, SHOW ENCRYPTKEYS [IN | FROM db] [LIKE '...'].

A key belongs to a database and is stored with its text as given; `KEY [db.]k` as a function
argument (`aes_encrypt(s, KEY k)`) stands for that text, looked up at each execution
(server/parser/encrypt_key_refs.py, server/handlers/session_values.py).

Journal operations (entries of `catalog/catalog.py:_APPLY`), state `Catalog.encrypt_keys`
({db name: {key name: key text}}):

    op                  data
    create_encrypt_key  {db, name, key}
    drop_encrypt_key    {db, name}
"""

from __future__ import annotations

from catalog.errors import DdlError
from catalog.names import check_common_name

COLUMNS = ["EncryptKey Name", "EncryptKey String"]


def create_key(cat, db: str, name: str, key: str, if_not_exists: bool = False) -> None:
    check_common_name("EncryptKey", name)
    with cat.lock:
        db = cat.get_db(db).name
        if name in cat.encrypt_keys.get(db, {}):
            if if_not_exists:
                return
            raise DdlError(f"encryptKey [{db}.{name}] already exists")
        cat._log("create_encrypt_key", {"db": db, "name": name, "key": key})  # noqa: SLF001


def drop_key(cat, db: str, name: str, if_exists: bool = False) -> None:
    with cat.lock:
        db = cat.get_db(db).name
        if name not in cat.encrypt_keys.get(db, {}):
            if if_exists:
                return
            raise DdlError(f"Unknown encryptKey, encryptKey={db}.{name}")
        cat._log("drop_encrypt_key", {"db": db, "name": name})  # noqa: SLF001


def show_rows(cat, db: str, keep) -> list[tuple]:
    """`db.name` and the key text of the database's keys whose name `keep` accepts."""
    with cat.lock:
        db = cat.get_db(db).name
        keys = dict(cat.encrypt_keys.get(db, {}))
    return [(f"{db}.{n}", keys[n]) for n in sorted(keys) if keep(n)]


def _apply_create(cat, data: dict) -> None:
    cat.encrypt_keys.setdefault(data["db"], {})[data["name"]] = data["key"]


def _apply_drop(cat, data: dict) -> None:
    cat.encrypt_keys.get(data["db"], {}).pop(data["name"], None)


APPLY = {"create_encrypt_key": _apply_create, "drop_encrypt_key": _apply_drop}
