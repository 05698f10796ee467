"""ALTER DATABASE: rename, data quota and replica quota, as Doris's Env / Database keep them.

    ALTER DATABASE db RENAME new_name
    ALTER DATABASE db SET DATA QUOTA <n>[B|K|KB|M|MB|G|GB|T|TB|P|PB]
    ALTER DATABASE db SET REPLICA QUOTA <n>

Journal operations (entries of `catalog/catalog.py:_APPLY`):

    op            data
    rename_db     {name, new_name}
    set_db_quota  {db, data_quota | replica_quota}

The quotas are enforced as Doris does: a load (Stream Load, INSERT, group commit) into a
database whose published data already reaches its data quota fails before it writes anything
(Database.checkDataSizeQuota, at the transaction's begin), and CREATE TABLE / ADD PARTITION
that would take the database past its replica quota is refused (checkReplicaQuota). SHOW DATA
and SHOW PROC '/dbs' print them. Labels, alias functions and load / export records are kept by
database name, so a rename carries them.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from catalog.errors import AnalysisError, DatabaseExists, DdlError
from catalog.names import check_database_name

if TYPE_CHECKING:
    from catalog.catalog import Catalog
    from catalog.model import Database

DEFAULT_DATA_QUOTA = 1 << 50           # Doris's FeConstants.default_db_data_quota_bytes (1024 TB)
DEFAULT_REPLICA_QUOTA = 1073741824     # and default_db_replica_quota_size
_UNITS = {"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "M": 1 << 20, "MB": 1 << 20,
          "G": 1 << 30, "GB": 1 << 30, "T": 1 << 40, "TB": 1 << 40, "P": 1 << 50, "PB": 1 << 50}
_VOLUME = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$")


def parse_data_volume(text: str) -> int:
    """Doris's ParseUtil.analyzeDataVolume: a number of bytes, or with a unit (case-insensitive)."""
    m = _VOLUME.match(text)
    if m is None or m.group(2).upper() not in _UNITS:
        raise AnalysisError(f"invalid data volume: {text}")
    value = int(float(m.group(1)) * _UNITS[m.group(2).upper()])
    if value <= 0:
        raise AnalysisError("Data volume must larger than 0")
    return value


def rename_database(cat: Catalog, name: str, new_name: str) -> None:
    from catalog.system_dbs import system_db
    with cat.lock:
        db = cat.get_db(name)
        if system_db(db.name) is not None:
            raise DdlError(f"Can not rename database {db.name}")
        if db.name == new_name:
            raise DdlError("Same database name")
        check_database_name(new_name)
        if new_name in cat.dbs:
            raise DatabaseExists(new_name)
        cat._log("rename_db", {"name": db.name, "new_name": new_name})  # noqa: SLF001


def set_quota(cat: Catalog, name: str, data_quota: int | None = None,
              replica_quota: int | None = None) -> None:
    with cat.lock:
        db = cat.get_db(name)
        entry = {"db": db.name}
        if data_quota is not None:
            entry["data_quota"] = data_quota
        if replica_quota is not None:
            if replica_quota <= 0:
                raise AnalysisError("Replica quota must larger than 0")
            entry["replica_quota"] = replica_quota
        cat._log("set_db_quota", entry)  # noqa: SLF001


def used_data_bytes(db: Database) -> int:
    """The published bytes of every replica of every table (what SHOW DATA totals)."""
    from catalog.information_schema import table_totals
    return sum(table_totals(t)[0] for t in db.tables.values())


def used_replicas(db: Database) -> int:
    from catalog.information_schema import table_totals
    return sum(table_totals(t)[1] for t in db.tables.values())


def check_data_quota(cat: Catalog, name: str) -> None:
    """Database.checkDataSizeQuota: a load into a database at or over its data quota fails."""
    from catalog.backend import byte_text
    with cat.lock:
        db = cat.get_db(name)
        if db.data_quota >= DEFAULT_DATA_QUOTA:
            return  # the default: nothing to sum
        if used_data_bytes(db) >= db.data_quota:
            raise DdlError(f"Database[{db.name}] data size exceeds quota[{byte_text(db.data_quota)}]")


def check_replica_quota(cat: Catalog, db: Database, new_replicas: int) -> None:
    """Database.checkReplicaQuota, for DDL that creates `new_replicas` replicas (caller holds
    the catalog lock)."""
    if db.replica_quota >= DEFAULT_REPLICA_QUOTA:
        return
    if used_replicas(db) + new_replicas > db.replica_quota:
        raise DdlError(f"Database[{db.name}] replica number exceeds quota[{db.replica_quota}]")


def _apply_rename(cat: Catalog, data: dict) -> None:
    db = cat.dbs.pop(data["name"])
    db.name = data["new_name"]
    cat.dbs[db.name] = db
    # what is kept by database name follows it (Doris keys these by database id)
    if data["name"] in cat.labels:
        cat.labels[db.name] = cat.labels.pop(data["name"])
    if data["name"] in cat.delete_infos:
        cat.delete_infos[db.name] = cat.delete_infos.pop(data["name"])
    if data["name"] in cat.functions:
        cat.functions[db.name] = cat.functions.pop(data["name"])
        for fn in cat.functions[db.name].values():
            fn["db"] = db.name
    for job in [*cat.load_jobs.values(), *cat.export_jobs.values()]:
        if job.get("db") == data["name"]:
            job["db"] = db.name


def _apply_quota(cat: Catalog, data: dict) -> None:
    db = cat.dbs[data["db"]]
    if "data_quota" in data:
        db.data_quota = data["data_quota"]
    if "replica_quota" in data:
        db.replica_quota = data["replica_quota"]


APPLY = {"rename_db": _apply_rename, "set_db_quota": _apply_quota}
