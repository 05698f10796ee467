"""information_schema tables of Doris's own (not MySQL's), as Doris 2.1's SchemaTable declares
them and its MetadataGenerator / BE schema scanners fill them:

    rowsets              every published rowset of every replica of the visible tables' tablets
                         (all indexes): versions, rows, segments, bytes, creation time
    table_options        per OLAP table: model (DUP / AGG / UNI), key columns, distribution
                         (HASH with its columns, or RANDOM), buckets, partitions
    table_properties     per OLAP table, one row per property SHOW CREATE TABLE prints
    metadata_name_ids    the ids of catalog, database and table of each visible table
    workload_groups      SHOW WORKLOAD GROUPS' groups (catalog/workload_groups.py)
    workload_policy      (workload policies do not exist here: no rows)

The builders run under the catalog lock with the catalog (and the session's variables, unused
here), like the MySQL tables of catalog/information_schema.py, which merges these in.
"""

from __future__ import annotations

from datetime import datetime
from typing import Callable

from catalog import workload_groups
from catalog.access import visible_tbl
from catalog.model import AGG_KEYS, DUP_KEYS, UNIQUE_KEYS, OlapTable
from catalog.shown_properties import shown_properties

INTERNAL = "internal"
INTERNAL_CATALOG_ID = 0
_MODEL = {DUP_KEYS: "DUP", AGG_KEYS: "AGG", UNIQUE_KEYS: "UNI"}  # KeysType.toMetadata()
# Doris shows the bigint settings of a group as numbers, the others (percentages, flags, tag) as text
_GROUP_NUMBERS = {"cpu_share", "max_concurrency", "max_queue_size", "queue_timeout",
                  "scan_thread_num", "max_remote_scan_thread_num", "min_remote_scan_thread_num",
                  "read_bytes_per_second", "remote_read_bytes_per_second"}


def table_model(keys_type: str) -> str:
    """information_schema's name of a data model (COLUMNS.COLUMN_KEY, TABLE_OPTIONS)."""
    return _MODEL.get(keys_type, "")


def column_specs() -> dict[str, tuple[str, ...]]:
    """Each table's columns in catalog/information_schema.py's `NAME:T` spec form."""
    return {
        "ROWSETS": ("BACKEND_ID:i", "ROWSET_ID", "TABLET_ID:i", "ROWSET_NUM_ROWS:i", "TXN_ID:i",
                    "NUM_SEGMENTS:i", "START_VERSION:i", "END_VERSION:i", "INDEX_DISK_SIZE:i",
                    "DATA_DISK_SIZE:i", "CREATION_TIME:t", "NEWEST_WRITE_TIMESTAMP:t"),
        "TABLE_OPTIONS": ("TABLE_CATALOG", "TABLE_SCHEMA", "TABLE_NAME", "TABLE_MODEL:s",
                          "TABLE_MODEL_KEY:s", "DISTRIBUTE_KEY:s", "DISTRIBUTE_TYPE:s",
                          "BUCKETS_NUM:n", "PARTITION_NUM:n"),
        "TABLE_PROPERTIES": ("TABLE_CATALOG", "TABLE_SCHEMA", "TABLE_NAME", "PROPERTY_NAME:s",
                             "PROPERTY_VALUE:s"),
        "METADATA_NAME_IDS": ("CATALOG_ID:i", "CATALOG_NAME:v512", "DATABASE_ID:i",
                              "DATABASE_NAME", "TABLE_ID:i", "TABLE_NAME"),
        "WORKLOAD_GROUPS": ("ID:i", "NAME:v256",
                            *(f"{k.upper()}:{'i' if k in _GROUP_NUMBERS else 'v256'}"
                              for k, _ in workload_groups.SHOWN)),
        "WORKLOAD_POLICY": ("ID:i", "NAME:v256", "CONDITION:s", "ACTION:s", "PRIORITY:n",
                            "ENABLED:v5", "VERSION:n"),
    }


def _olap_tables(catalog) -> list[tuple[object, OlapTable]]:
    return [(db, t) for db in catalog.dbs.values() for t in db.tables.values()
            if visible_tbl(db.name, t.name)]


def _time(seconds: float | None) -> datetime | None:
    return datetime.fromtimestamp(int(seconds)) if seconds else None


def _rowsets(catalog, variables) -> list[dict]:
    rows = []
    for _, table in _olap_tables(catalog):
        for partition in table.partitions.values():
            for tablet in partition.tablets.values():
                for published in tablet.rowsets:
                    meta = published["meta"]
                    end = meta.get("end_version") or published["version"]
                    start = meta.get("start_version") or end
                    created = _time(meta.get("creation_time"))
                    segments = len(meta.get("segments") or []) or \
                        (1 if meta.get("load_file") else 0)
                    row = {"ROWSET_ID": str(meta["rowset_id"]), "TABLET_ID": tablet.tablet_id,
                           "ROWSET_NUM_ROWS": int(meta.get("num_rows", 0)),
                           "TXN_ID": meta.get("txn_id"), "NUM_SEGMENTS": segments,
                           "START_VERSION": start, "END_VERSION": end, "INDEX_DISK_SIZE": 0,
                           "DATA_DISK_SIZE": int(meta.get("data_size", 0)),
                           "CREATION_TIME": created, "NEWEST_WRITE_TIMESTAMP": created}
                    rows.extend({"BACKEND_ID": be, **row} for be in tablet.replicas)
    return rows


def _table_options(catalog, variables) -> list[dict]:
    rows = []
    for db, table in _olap_tables(catalog):
        dist = table.distribution
        hashed = dist.kind == "HASH"
        rows.append({"TABLE_CATALOG": INTERNAL, "TABLE_SCHEMA": db.name, "TABLE_NAME": table.name,
                     "TABLE_MODEL": table_model(table.keys_type),
                     "TABLE_MODEL_KEY": ",".join(c.name for c in table.key_columns),
                     "DISTRIBUTE_KEY": ",".join(dist.columns) if hashed else "RANDOM",
                     "DISTRIBUTE_TYPE": "HASH" if hashed else "RANDOM",
                     "BUCKETS_NUM": dist.buckets, "PARTITION_NUM": len(table.partitions)})
    return rows


def _table_properties(catalog, variables) -> list[dict]:
    return [{"TABLE_CATALOG": INTERNAL, "TABLE_SCHEMA": db.name, "TABLE_NAME": table.name,
             "PROPERTY_NAME": key, "PROPERTY_VALUE": value}
            for db, table in _olap_tables(catalog)
            for key, value in shown_properties(table).items()]


def _metadata_name_ids(catalog, variables) -> list[dict]:
    return [{"CATALOG_ID": INTERNAL_CATALOG_ID, "CATALOG_NAME": INTERNAL,
             "DATABASE_ID": db.db_id, "DATABASE_NAME": db.name, "TABLE_ID": table.table_id,
             "TABLE_NAME": table.name}
            for db, table in _olap_tables(catalog)]


def _workload_groups(catalog, variables) -> list[dict]:
    names = ["ID", "NAME", *(k.upper() for k, _ in workload_groups.SHOWN)]
    rows = []
    for shown in workload_groups.show_rows(catalog, lambda name: True):
        row = dict(zip(names, shown))
        for key in _GROUP_NUMBERS | {"id"}:
            value = row.get(key.upper())
            row[key.upper()] = int(value) if value not in (None, "") else None
        rows.append(row)
    return rows


BUILDERS: dict[str, Callable] = {
    "ROWSETS": _rowsets, "TABLE_OPTIONS": _table_options, "TABLE_PROPERTIES": _table_properties,
    "METADATA_NAME_IDS": _metadata_name_ids, "WORKLOAD_GROUPS": _workload_groups,
}

