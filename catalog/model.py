"""Catalog objects: Database, OlapTable, Column, Partition, MaterializedIndex, TabletMeta.

The shape follows Doris's FE: a table has partitions; each partition holds, for every materialized
index (the base index and each rollup), a list of tablets (one per bucket); each tablet has
replicas placed on backends. Every object converts to and from a JSON-safe dict: the journal and
the image are made of these dicts.

    OlapTable
      ├─ columns, keys_type, distribution (hash columns, buckets), partition_info
      ├─ indexes: {index_id: MaterializedIndexMeta}   (base index first, then rollups)
      ├─ table_indexes: [TableIndex]                  (INDEX ... USING BITMAP; bloom filters
      │                                                 are the bloom_filter_* properties)
      └─ partitions: {partition_id: Partition}
                         └─ tablets_by_index: {index_id: [tablet_id per bucket]}
                         └─ tablets: {tablet_id: TabletMeta(replicas, published rowsets)}
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from storage.types import DataType

AGG_KEYS = "AGG_KEYS"
UNIQUE_KEYS = "UNIQUE_KEYS"
DUP_KEYS = "DUP_KEYS"
KEYS_SQL = {AGG_KEYS: "AGGREGATE KEY", UNIQUE_KEYS: "UNIQUE KEY", DUP_KEYS: "DUPLICATE KEY"}
AGGREGATIONS = ("SUM", "MAX", "MIN", "REPLACE", "REPLACE_IF_NOT_NULL", "BITMAP_UNION",
                "HLL_UNION")


@dataclass
class Column:
    name: str
    type: DataType
    is_key: bool = False
    aggregation: str | None = None
    nullable: bool = True
    default: str | None = None
    comment: str = ""
    auto_increment: bool = False
    unique_id: int = -1  # Doris's column unique id, given at the table's first schema change
    auto_increment_start: int = 1  # AUTO_INCREMENT(n): the first id (catalog/auto_increment.py)

    def to_dict(self) -> dict:
        d = {"name": self.name, "type": self.type.to_dict(), "is_key": self.is_key,
             "aggregation": self.aggregation, "nullable": self.nullable,
             "default": self.default, "comment": self.comment,
             "auto_increment": self.auto_increment}
        if self.unique_id >= 0:
            d["unique_id"] = self.unique_id
        if self.auto_increment and self.auto_increment_start != 1:
            d["auto_increment_start"] = self.auto_increment_start
        return d

    @staticmethod
    def from_dict(d: dict) -> Column:
        return Column(d["name"], DataType.from_dict(d["type"]), d["is_key"], d["aggregation"],
                      d["nullable"], d["default"], d["comment"], d.get("auto_increment", False),
                      int(d.get("unique_id", -1)), int(d.get("auto_increment_start", 1)))


@dataclass
class MaterializedIndexMeta:
    """A materialized index: the base index, a rollup or a synchronous materialized view.

    `columns` is the index's column order; its first `key_count` columns are its keys (None:
    the base table's key flags, as for the base index and rollups of AGG/UNIQUE tables).
    `aggregations` overrides a column's aggregation type (a materialized view's SUM over a
    duplicate table's column); `define_exprs` maps a column the base lacks to how it is
    computed from base columns (Doris MV columns such as `mv_count_x`; see
    catalog/index_rows.py). `state` is SHADOW while an ADD ROLLUP job builds it (loads write it,
    queries never read it), NORMAL once it is visible."""

    index_id: int
    name: str
    columns: list[str]
    keys_type: str
    key_count: int | None = None
    state: str = "NORMAL"
    aggregations: dict[str, str] = field(default_factory=dict)
    define_exprs: dict[str, list[str]] = field(default_factory=dict)
    properties: dict[str, str] = field(default_factory=dict)
    is_mv: bool = False
    define_sql: str = ""
    # A heavy schema change's shadow index: its own column definitions (Column dicts) until
    # the job swaps it in (catalog/schema_change_job.py); None otherwise.
    schema: list[dict] | None = None
    # A materialized view's WHERE (Doris SQL over base column names): the index holds only
    # the base rows it selects (catalog/index_rows.py); "" for none.
    where_clause: str = ""

    def to_dict(self) -> dict:
        d = {"index_id": self.index_id, "name": self.name, "columns": self.columns,
             "keys_type": self.keys_type, "key_count": self.key_count, "state": self.state,
             "aggregations": self.aggregations, "define_exprs": self.define_exprs,
             "properties": self.properties, "is_mv": self.is_mv,
             "define_sql": self.define_sql}
        if self.schema is not None:
            d["schema"] = self.schema
        if self.where_clause:
            d["where_clause"] = self.where_clause
        return d

    @staticmethod
    def from_dict(d: dict) -> MaterializedIndexMeta:
        return MaterializedIndexMeta(d["index_id"], d["name"], d["columns"], d["keys_type"],
                                     d.get("key_count"), d.get("state", "NORMAL"),
                                     dict(d.get("aggregations", {})),
                                     {k: list(v) for k, v in d.get("define_exprs", {}).items()},
                                     dict(d.get("properties", {})), d.get("is_mv", False),
                                     d.get("define_sql", ""), d.get("schema"),
                                     d.get("where_clause", ""))


@dataclass
class TableIndex:
    """A secondary index on columns (Doris's `Index`): `INDEX name (cols) USING BITMAP`."""

    index_id: int
    name: str
    columns: list[str]
    index_type: str = "BITMAP"
    comment: str = ""
    properties: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"index_id": self.index_id, "name": self.name, "columns": self.columns,
                "index_type": self.index_type, "comment": self.comment,
                "properties": self.properties}

    @staticmethod
    def from_dict(d: dict) -> TableIndex:
        return TableIndex(d["index_id"], d["name"], list(d["columns"]), d["index_type"],
                          d.get("comment", ""), dict(d.get("properties", {})))


@dataclass
class TabletMeta:
    tablet_id: int
    replicas: list[int]  # backend ids
    # Published rowsets, in publish order: [{"meta": RowsetMeta dict, "version": v}, ...]
    rowsets: list[dict] = field(default_factory=list)

    def data_size(self) -> int:
        """Bytes of the published rowsets (of one replica)."""
        return sum(int(r["meta"].get("data_size", 0)) for r in self.rowsets)

    def row_count(self) -> int:
        """Rows of the published rowsets (as stored, before merge-on-read)."""
        return sum(int(r["meta"].get("num_rows", 0)) for r in self.rowsets)

    def to_dict(self) -> dict:
        return {"tablet_id": self.tablet_id, "replicas": self.replicas, "rowsets": self.rowsets}

    @staticmethod
    def from_dict(d: dict) -> TabletMeta:
        return TabletMeta(d["tablet_id"], d["replicas"], d.get("rowsets", []))


@dataclass
class Partition:
    partition_id: int
    name: str
    # RANGE: lower/upper bound tuples of strings; None inside a tuple = MINVALUE/MAXVALUE.
    # LIST: `values` is a list of tuples. UNPARTITIONED: all None.
    lower: list | None
    upper: list | None
    values: list | None
    buckets: int
    replication_num: int
    visible_version: int = 1
    visible_version_time: float = 0.0
    tablets_by_index: dict[int, list[int]] = field(default_factory=dict)
    tablets: dict[int, TabletMeta] = field(default_factory=dict)
    # MODIFY PARTITION's storage_medium / storage_cooldown_time (catalog/partition_properties.py)
    properties: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"partition_id": self.partition_id, "name": self.name, "lower": self.lower,
                "upper": self.upper, "values": self.values, "buckets": self.buckets,
                "replication_num": self.replication_num,
                "visible_version": self.visible_version,
                "visible_version_time": self.visible_version_time,
                "tablets_by_index": {str(k): v for k, v in self.tablets_by_index.items()},
                "tablets": [t.to_dict() for t in self.tablets.values()],
                **({"properties": self.properties} if self.properties else {})}

    @staticmethod
    def from_dict(d: dict) -> Partition:
        p = Partition(d["partition_id"], d["name"], d["lower"], d["upper"], d["values"],
                      d["buckets"], d["replication_num"], d["visible_version"],
                      d["visible_version_time"])
        p.tablets_by_index = {int(k): v for k, v in d["tablets_by_index"].items()}
        p.tablets = {t["tablet_id"]: TabletMeta.from_dict(t) for t in d["tablets"]}
        p.properties = dict(d.get("properties", {}))
        return p


@dataclass
class PartitionInfo:
    """How a table is partitioned: UNPARTITIONED, RANGE or LIST over `columns`. `auto`: Doris
    2.1's AUTO PARTITION (loads create the partitions their rows need,
    catalog/auto_partition.py); an auto RANGE partitions by date_trunc(column, `auto_unit`)."""

    kind: str = "UNPARTITIONED"
    columns: list[str] = field(default_factory=list)
    auto: bool = False
    auto_unit: str | None = None

    def to_dict(self) -> dict:
        d = {"kind": self.kind, "columns": self.columns}
        if self.auto:
            d.update(auto=True, auto_unit=self.auto_unit)
        return d

    @staticmethod
    def from_dict(d: dict) -> PartitionInfo:
        return PartitionInfo(d["kind"], d["columns"], d.get("auto", False), d.get("auto_unit"))


@dataclass
class DistributionInfo:
    """HASH(columns) BUCKETS n, or RANDOM BUCKETS n (columns empty)."""

    kind: str
    columns: list[str]
    buckets: int
    auto_buckets: bool = False

    def to_dict(self) -> dict:
        return {"kind": self.kind, "columns": self.columns, "buckets": self.buckets,
                "auto_buckets": self.auto_buckets}

    @staticmethod
    def from_dict(d: dict) -> DistributionInfo:
        return DistributionInfo(d["kind"], d["columns"], d["buckets"], d.get("auto_buckets", False))


@dataclass
class OlapTable:
    table_id: int
    name: str
    columns: list[Column]
    keys_type: str
    partition_info: PartitionInfo
    distribution: DistributionInfo
    properties: dict[str, str]
    comment: str = ""
    base_index_id: int = 0
    indexes: dict[int, MaterializedIndexMeta] = field(default_factory=dict)
    partitions: dict[int, Partition] = field(default_factory=dict)
    create_time: float = 0.0
    table_indexes: list[TableIndex] = field(default_factory=list)
    # ALTER TABLE ADD TEMPORARY PARTITION: invisible to plain reads, loaded and read by name,
    # swapped in by REPLACE PARTITION (catalog/temp_partitions.py).
    temp_partitions: dict[int, Partition] = field(default_factory=dict)
    # Light schema change (catalog/schema_change.py): the next column unique id, and each id's
    # column name in rowsets written before the table had ids (TabletSchema.origin_names).
    next_column_uid: int = 0
    origin_column_names: dict[int, str] = field(default_factory=dict)
    # Doris's hidden columns (__DORIS_DELETE_SIGN__, ...: catalog/hidden_columns.py), after
    # `columns` in every index of a Unique table; not in `columns`, so SELECT * and DESC skip them.
    hidden_columns: list[Column] = field(default_factory=list)
    # the next id of its AUTO_INCREMENT column, 0 until the first load takes one
    # (catalog/auto_increment.py; journaled with every publish into the table)
    auto_increment_next: int = 0
    # an asynchronous materialized view's definition, job and refresh record (catalog/mtmv.py);
    # None for a plain table
    mtmv: dict | None = None

    # -- lookups -------------------------------------------------------------------------------
    def column(self, name: str) -> Column | None:
        low = name.lower()
        return next((c for c in self.columns if c.name.lower() == low), None)

    @property
    def key_columns(self) -> list[Column]:
        return [c for c in self.columns if c.is_key]

    def partition_by_name(self, name: str) -> Partition | None:
        low = name.lower()
        return next((p for p in self.partitions.values() if p.name.lower() == low), None)

    def partitions_named(self, names: list[str], missing) -> list[Partition]:
        """The formal partitions called `names`, in that order; `missing(name)` is the error
        raised for one the table does not have (each statement words it its own way)."""
        parts = []
        for name in names:
            p = self.partition_by_name(name)
            if p is None:
                raise missing(name)
            parts.append(p)
        return parts

    def sorted_partitions(self) -> list[Partition]:
        return sorted(self.partitions.values(), key=lambda p: p.partition_id)

    def all_partitions(self) -> list[Partition]:
        """Formal and temporary partitions: everything that owns tablets."""
        return [*self.partitions.values(), *self.temp_partitions.values()]

    def any_partition(self, partition_id: int) -> Partition:
        p = self.find_partition(partition_id)
        if p is None:
            raise KeyError(partition_id)
        return p

    def find_partition(self, partition_id: int) -> Partition | None:
        """The formal or temporary partition of that id, or None (dropped or replaced)."""
        p = self.partitions.get(partition_id)
        return p if p is not None else self.temp_partitions.get(partition_id)

    def index_by_name(self, name: str) -> MaterializedIndexMeta | None:
        return next((i for i in self.indexes.values() if i.name == name), None)

    def rollups(self, state: str | None = "NORMAL") -> list[MaterializedIndexMeta]:
        """The indexes other than the base (only those in `state`, unless None)."""
        return [i for i in self.indexes.values() if i.index_id != self.base_index_id
                and (state is None or i.state == state)]

    def index_columns(self, index_id: int | None = None) -> list[Column]:
        """The columns of one materialized index, in its order, with its keys and aggregations."""
        index = self.indexes[index_id or self.base_index_id]
        if index.schema is not None:
            return [Column.from_dict(c) for c in index.schema]
        out = []
        for pos, name in enumerate(index.columns):
            base = self.column(name)
            if base is None:  # a materialized view's computed column (catalog/index_rows.py)
                count = index.define_exprs[name][0] == "count"
                base = Column(name, DataType(index.properties.get(f"type.{name}", "BIGINT")),
                              False, None, not count, "0" if count else None)
            is_key = base.is_key if index.key_count is None else pos < index.key_count
            if is_key or index.keys_type == DUP_KEYS:
                agg = None
            else:
                agg = index.aggregations.get(name, base.aggregation)
            out.append(Column(base.name, base.type, is_key, agg, base.nullable, base.default,
                              base.comment, base.auto_increment, base.unique_id,
                              base.auto_increment_start))
        return out

    def tablet_schema(self, index_id: int | None = None) -> "TabletSchema":
        """The schema storage uses for tablets of one materialized index."""
        from storage.schema import TabletColumn, TabletSchema

        index = self.indexes[index_id or self.base_index_id]
        cols = self.index_columns(index.index_id)
        if index.keys_type == UNIQUE_KEYS:
            cols = cols + self.hidden_columns
        names = {c.name for c in cols}
        bloom = [n.strip() for n in self.properties.get("bloom_filter_columns", "").split(",")]
        return TabletSchema(
            [TabletColumn(c.name, c.type, c.is_key, c.aggregation, c.nullable, c.unique_id,
                          c.default if c.unique_id >= 0 else None) for c in cols],
            index.keys_type, tuple(n for n in bloom if n in names),
            float(self.properties.get("bloom_filter_fpp", "0.05")),
            {i.columns[0]: i.index_id for i in self.table_indexes
             if i.index_type == "BITMAP" and i.columns[0] in names},
            self._sequence_column(names), dict(self.origin_column_names),
            index.index_id == self.base_index_id and self._merge_on_write(),
            {i.columns[0]: {"index_id": i.index_id, "properties": dict(i.properties)}
             for i in self.table_indexes
             if i.index_type == "INVERTED" and i.columns[0] in names},
            {i.columns[0]: {"gram_size": i.properties["gram_size"],
                            "bf_size": i.properties["bf_size"]}
             for i in self.table_indexes
             if i.index_type == "NGRAM_BF" and i.columns[0] in names})

    def _merge_on_write(self) -> bool:
        """catalog/unique_model.py's property (its rollups still merge on read)."""
        return self.keys_type == UNIQUE_KEYS and \
            self.properties.get("enable_unique_key_merge_on_write") == "true"

    def _sequence_column(self, names: set[str]) -> str | None:
        """The hidden __DORIS_SEQUENCE_COL__, or (a table created before hidden columns)
        `function_column.sequence_col` (catalog/unique_model.py), if this index has it."""
        from storage.schema import SEQUENCE_COL
        if SEQUENCE_COL in names:
            return SEQUENCE_COL
        col = self.properties.get("function_column.sequence_col")
        found = self.column(col) if col else None
        return found.name if found is not None and found.name in names else None

    def to_dict(self) -> dict:
        return {"table_id": self.table_id, "name": self.name,
                "columns": [c.to_dict() for c in self.columns], "keys_type": self.keys_type,
                "partition_info": self.partition_info.to_dict(),
                "distribution": self.distribution.to_dict(), "properties": self.properties,
                "comment": self.comment, "base_index_id": self.base_index_id,
                "indexes": [i.to_dict() for i in self.indexes.values()],
                "partitions": [p.to_dict() for p in self.partitions.values()],
                "create_time": self.create_time,
                "table_indexes": [i.to_dict() for i in self.table_indexes],
                "temp_partitions": [p.to_dict() for p in self.temp_partitions.values()],
                **({"hidden_columns": [c.to_dict() for c in self.hidden_columns]}
                   if self.hidden_columns else {}),
                **({"next_column_uid": self.next_column_uid,
                    "origin_column_names": {str(k): v for k, v in
                                            self.origin_column_names.items()}}
                   if self.next_column_uid else {}),
                **({"auto_increment_next": self.auto_increment_next}
                   if self.auto_increment_next else {}),
                **({"mtmv": self.mtmv} if self.mtmv is not None else {})}

    @staticmethod
    def from_dict(d: dict) -> OlapTable:
        t = OlapTable(d["table_id"], d["name"], [Column.from_dict(c) for c in d["columns"]],
                      d["keys_type"], PartitionInfo.from_dict(d["partition_info"]),
                      DistributionInfo.from_dict(d["distribution"]), d["properties"],
                      d["comment"], d["base_index_id"])
        t.indexes = {i["index_id"]: MaterializedIndexMeta.from_dict(i) for i in d["indexes"]}
        t.partitions = {p["partition_id"]: Partition.from_dict(p) for p in d["partitions"]}
        t.create_time = d.get("create_time", 0.0)
        t.table_indexes = [TableIndex.from_dict(i) for i in d.get("table_indexes", [])]
        t.temp_partitions = {p["partition_id"]: Partition.from_dict(p)
                             for p in d.get("temp_partitions", [])}
        t.next_column_uid = int(d.get("next_column_uid", 0))
        t.origin_column_names = {int(k): v for k, v in d.get("origin_column_names", {}).items()}
        t.hidden_columns = [Column.from_dict(c) for c in d.get("hidden_columns", [])]
        t.auto_increment_next = int(d.get("auto_increment_next", 0))
        t.mtmv = d.get("mtmv")
        return t


@dataclass
class Database:
    db_id: int
    name: str
    tables: dict[str, OlapTable] = field(default_factory=dict)  # names are case-sensitive
    views: dict[str, dict] = field(default_factory=dict)  # name -> view (catalog/views.py)
    # ALTER DATABASE SET DATA | REPLICA QUOTA (catalog/database_alter.py); Doris's defaults
    data_quota: int = 1 << 50
    replica_quota: int = 1073741824

    def to_dict(self) -> dict[str, Any]:
        return {"db_id": self.db_id, "name": self.name,
                "tables": [t.to_dict() for t in self.tables.values()],
                "views": list(self.views.values()),
                "data_quota": self.data_quota, "replica_quota": self.replica_quota}

    @staticmethod
    def from_dict(d: dict) -> Database:
        db = Database(d["db_id"], d["name"])
        db.data_quota = d.get("data_quota", db.data_quota)
        db.replica_quota = d.get("replica_quota", db.replica_quota)
        db.views = {v["name"]: v for v in d.get("views", [])}
        for t in d["tables"]:
            table = OlapTable.from_dict(t)
            db.tables[table.name] = table
        return db
