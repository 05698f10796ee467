"""CREATE TABLE analysis: Doris's validation rules, and the OlapTable a valid statement describes.

Rules (Doris FE's CreateTableStmt / KeysDesc / PartitionDesc / DistributionDesc):
- no KEY clause: AGGREGATE if any column has an aggregation type (all other columns are keys),
  else DUPLICATE with the leading columns as keys: up to 3 columns or 36 bytes, stopping right
  after the first VARCHAR; a FLOAT, DOUBLE or STRING first column is then an error;
- key columns are an ordered prefix of the schema; keys have no aggregation type; AGGREGATE
  values need one, UNIQUE and DUPLICATE values must not have one; STRING/FLOAT/DOUBLE cannot be
  keys;
- AGGREGATE and UNIQUE tables distribute by key columns only;
- partition columns exist and are keys; partition values fit their types; ranges do not overlap.

`build_table` allocates no ids itself: the caller passes an id allocator so that the journal
entry carries every id and replay is deterministic.
"""

from __future__ import annotations

import time
from typing import Callable

from catalog import auto_increment
from catalog.errors import AnalysisError, DdlError
from catalog.index_rules import analyze_bloom_filter, create_table_indexes
from catalog.known_properties import check_known
from catalog.compaction_properties import check_create as check_compaction_properties
from catalog.model import (AGG_KEYS, DUP_KEYS, UNIQUE_KEYS, Column, DistributionInfo,
                           MaterializedIndexMeta, OlapTable, Partition, PartitionInfo)
from catalog.hidden_columns import build_hidden_columns
from catalog.unique_model import analyze_merge_on_write, analyze_sequence
from catalog.names import check_column_name, check_table_name
from catalog.partitions import check_list_values, check_range, validate_bound
from catalog.statements import CreateTableStmt, PartitionDesc
from catalog.values import parse_value
from storage.types import DataType

MAX_BUCKET_NUM_PER_PARTITION = 768  # Doris's FE config of that name, default 768
DEFAULT_BUCKETS = 10  # BUCKETS AUTO: Doris sizes by data volume; an empty table gets this.
_NO_KEY_KINDS = ("FLOAT", "DOUBLE", "STRING", "BITMAP", "HLL", "ARRAY", "MAP", "STRUCT", "JSON",
                 "VARIANT")


def analyze_columns(stmt: CreateTableStmt) -> tuple[str, list[Column]]:
    seen: set[str] = set()
    for c in stmt.columns:
        if c.name.lower() in seen:
            raise AnalysisError(f"Duplicate column name '{c.name}'")
        seen.add(c.name.lower())
    keys_type = stmt.keys_type
    key_names = [k.lower() for k in stmt.key_columns]
    if keys_type is None:
        keys_type, key_names = _implicit_keys(stmt)
    for k in key_names:
        if k not in seen:
            raise AnalysisError(f"Key column[{k}] doesn't exist.")
    for i, k in enumerate(key_names):
        if i >= len(stmt.columns) or stmt.columns[i].name.lower() != k:
            actual = stmt.columns[i].name if i < len(stmt.columns) else ""
            raise AnalysisError(
                f"Key columns should be a ordered prefix of the schema. KeyColumns[{i}] "
                f"(starts from zero) is {k}, but corresponding column is {actual} in the "
                f"previous columns declaration.")
    columns = []
    for i, c in enumerate(stmt.columns):
        is_key = i < len(key_names)
        if is_key:
            if c.aggregation:
                raise AnalysisError(f"Key column[{c.name}] should not specify aggregate type.")
            if c.type.kind in ("FLOAT", "DOUBLE"):  # Nereids ColumnDefinition.validate
                raise AnalysisError("Float or double can not used as a key, use decimal instead.")
            if c.type.is_nested:
                raise AnalysisError(nested_key_error(c.type))
            if c.type.is_object:
                raise AnalysisError(f"Key column can not set complex type:{c.name}")
            if c.type.is_json:
                raise AnalysisError(json_key_error(c.name, c.type))
            if c.type.kind in _NO_KEY_KINDS:
                raise AnalysisError(f"String Type should not be used in key column[{c.name}]")
        elif keys_type == AGG_KEYS and not c.aggregation:
            raise AnalysisError(f"AGG_KEYS table should specify aggregate type for non-key column[{c.name}]")
        elif keys_type != AGG_KEYS and c.aggregation:
            raise AnalysisError(f"{keys_type} table should not specify aggregate type for non-key column[{c.name}]")
        _check_aggregation_type(c)
        if c.type.is_nested:
            check_nested_column(c)
        if c.type.is_json and c.has_default and c.default is not None:
            raise AnalysisError(json_default_error(c.type))
        aggregation = c.aggregation
        if keys_type == UNIQUE_KEYS and not is_key:
            aggregation = "REPLACE"
        if c.has_default and c.default is not None and c.default != "CURRENT_TIMESTAMP" \
                and not c.type.is_nested:
            try:
                parse_value(c.type, c.default)
            except DdlError:
                raise AnalysisError(f"Invalid default value for '{c.name}'") from None
        nullable = True if c.nullable is None else c.nullable
        columns.append(Column(c.name, c.type, is_key, aggregation, nullable, c.default,
                              c.comment, c.auto_increment,
                              auto_increment_start=c.auto_increment_start))
    auto_increment.check_definition(stmt.columns, keys_type)
    return keys_type, columns


def nested_key_error(dtype: DataType) -> str:
    """ColumnDefinition.checkKeyColumnType's text for an ARRAY / MAP / STRUCT key column."""
    return f"{dtype.kind.capitalize()} can only be used in the non-key column of the duplicate " \
           f"table at present."


JSON_DEFAULT_ERROR = "Json type column default value just support null"


def json_default_error(dtype: DataType) -> str:
    """ColumnDefinition.validate's text for a JSON / VARIANT column's default (VARIANT's is
    the later `Json or Variant` text, the one Doris gives for it)."""
    return "Json or Variant type column default value just support null" if dtype.is_variant \
        else JSON_DEFAULT_ERROR


def json_key_error(name: str, dtype: DataType | None = None) -> str:
    """Nereids ColumnDefinition.validate's text for a JSON / VARIANT key column."""
    if dtype is not None and dtype.is_variant:
        return f"Variant type should not be used in key column[{name}]."
    return f"JsonType type should not be used in key column[{name}]."


def check_nested_column(c) -> None:
    """Nereids ColumnDefinition.validate for an ARRAY / MAP / STRUCT column: the types inside
    it (`check_nested_type`), nesting depth and default (NULL, or `[]` for an ARRAY); its
    aggregation type is checked by `_check_aggregation_type`."""
    check_nested_type(c.type)
    if c.type.depth > 9:
        raise AnalysisError("Type exceeds the maximum nesting depth of 9")
    if not c.has_default or c.default is None:
        return
    if c.type.is_array and c.default != "[]":
        raise AnalysisError("Array type column default value only support null or []")
    if not c.type.is_array:
        raise AnalysisError(f"{c.type.kind.capitalize()} type column default value just "
                            f"support null")


_NOT_NESTED = ("BITMAP", "HLL", "JSON", "VARIANT")  # Type.getArraySubTypes / getMapSubTypes / ...


def check_nested_type(dtype: DataType) -> None:
    """What a complex type may hold (Doris's TypeDef.analyzeNestedType): no BITMAP / HLL /
    JSON anywhere inside, a MAP's key a primitive type, a STRUCT's field names unique."""
    inner = [dtype.element] if dtype.element is not None else [f.type for f in dtype.fields]
    for t in inner:
        if t.kind in _NOT_NESTED or dtype.is_map and t is dtype.map_key and t.is_nested:
            raise AnalysisError(f"{dtype.kind} unsupported sub-type: {t.desc_sql()}")
        check_nested_type(t)
    if dtype.is_struct:
        seen: set[str] = set()
        for f in dtype.fields:
            if f.name.lower() in seen:
                raise AnalysisError(f"Duplicate field name {f.name} in struct {dtype.desc_sql()}")
            seen.add(f.name.lower())


# AggregateType.checkCompatibility: which aggregation each object type takes, and back.
_OBJECT_AGGREGATION = {"BITMAP": "BITMAP_UNION", "HLL": "HLL_UNION"}


def _check_aggregation_type(c) -> None:
    agg = c.aggregation
    if agg is None or agg in ("REPLACE", "REPLACE_IF_NOT_NULL") and not c.type.is_object:
        return
    fits = _OBJECT_AGGREGATION.get(c.type.kind) == agg if c.type.is_object or \
        agg in _OBJECT_AGGREGATION.values() else agg in ("SUM", "MAX", "MIN")
    if agg in ("SUM",) and not c.type.is_numeric or c.type.is_nested or c.type.is_json:
        fits = False  # ARRAY / MAP / STRUCT and JSON take REPLACE / REPLACE_IF_NOT_NULL only
    if not fits:
        raise AnalysisError(f"Aggregate type {agg} is not compatible with primitive type "
                            f"{c.type.desc_sql()}")


def _implicit_keys(stmt: CreateTableStmt) -> tuple[str, list[str]]:
    if any(c.aggregation for c in stmt.columns):
        return AGG_KEYS, [c.name.lower() for c in stmt.columns if not c.aggregation]
    first = stmt.columns[0]
    if first.type.kind in _NO_KEY_KINDS:
        # Nereids CreateTableInfo.validate: no short key can be made.
        raise AnalysisError("The olap table first column could not be float, double, string or "
                            "array, struct, map, please use decimal or varchar instead.")
    keys, size = [], 0
    for c in stmt.columns[:3]:
        if c.type.kind in _NO_KEY_KINDS:
            break
        width = c.type.key_bytes()
        if width > 0 and size + width > 36:
            break
        keys.append(c.name.lower())
        if c.type.kind in ("VARCHAR", "CHAR") and width < 0 or c.type.kind == "VARCHAR":
            break
        size += max(width, 0)
        if size >= 36:
            break
    return DUP_KEYS, keys


def check_bucket_num(buckets: int) -> int:
    """Doris's max_bucket_num_per_partition (768): a typo like BUCKETS 10000000 must not make
    millions of tablets."""
    if buckets > MAX_BUCKET_NUM_PER_PARTITION:
        raise AnalysisError(f"Number of buckets {buckets} exceeds the maximum allowed value "
                            f"({MAX_BUCKET_NUM_PER_PARTITION}), see max_bucket_num_per_partition")
    return buckets


def analyze_distribution(stmt: CreateTableStmt, keys_type: str,
                         columns: list[Column]) -> DistributionInfo:
    buckets = check_bucket_num(stmt.buckets or DEFAULT_BUCKETS)
    if stmt.distribution_kind is None:
        if keys_type == DUP_KEYS:
            return DistributionInfo("RANDOM", [], buckets, auto_buckets=True)
        return DistributionInfo("HASH", [columns[0].name], buckets, auto_buckets=True)
    if stmt.distribution_kind == "RANDOM":
        if keys_type == UNIQUE_KEYS:
            raise AnalysisError("Random distribution for unique key table is not supported")
        return DistributionInfo("RANDOM", [], buckets, stmt.buckets is None)
    names = []
    for name in stmt.distribution_columns:
        col = next((c for c in columns if c.name.lower() == name.lower()), None)
        if col is None:
            raise AnalysisError(f"Distribution column({name}) doesn't exist.")
        if keys_type != DUP_KEYS and not col.is_key:
            raise AnalysisError(f"Distribution column[{col.name}] is not key column")
        if col.type.is_float:
            raise AnalysisError(f"Float or double can not used as a distribution column: {col.name}")
        if col.type.is_nested:  # HashDistributionDesc.analyze
            raise AnalysisError(f"{col.type.kind.capitalize()} Type should not be used in "
                                f"distribution column[{col.name}].")
        if col.type.is_json:
            word = "Variant" if col.type.is_variant else "JsonType"
            raise AnalysisError(f"{word} type should not be used in distribution column"
                                f"[{col.name}].")
        names.append(col.name)
    if len(set(n.lower() for n in names)) != len(names):
        raise AnalysisError("Duplicated distribution column")
    return DistributionInfo("HASH", names, buckets, stmt.buckets is None)


def replication_num(properties: dict[str, str]) -> int:
    if "replication_num" in properties:
        raw = properties["replication_num"]
    elif "replication_allocation" in properties:
        raw = properties["replication_allocation"].rsplit(":", 1)[-1]
    else:
        return 3  # Doris's default replication_num
    try:
        n = int(raw.strip())
    except ValueError:
        raise AnalysisError(f"Invalid replication number: {raw}") from None
    if n <= 0:
        raise AnalysisError("Replication num should larger than 0. (suggested 3)")
    return n


AUTO_UNITS = ("year", "quarter", "month", "week", "day", "hour", "minute", "second")


def analyze_partition_info(stmt: CreateTableStmt, columns: list[Column]) -> PartitionInfo:
    if stmt.partition_kind is None:
        return PartitionInfo()
    # Nereids PartitionTableInfo.validatePartitionInfo / validatePartitionColumn, in its order.
    names: list[str] = []
    for name in stmt.partition_columns:
        col = next((c for c in columns if c.name.lower() == name.lower()), None)
        if col is None:
            raise AnalysisError(f"partition key {name} is not exists")
        if not col.is_key and col.aggregation:
            # Duplicate tables' value columns have no aggregation type and may partition;
            # UNIQUE value columns are REPLACE columns here as in Doris.
            raise AnalysisError("The partition column could not be aggregated column")
        if col.type.is_float:
            raise AnalysisError("Floating point type column can not be partition column")
        if col.type.is_nested:
            raise AnalysisError(f"Complex type column can't be partition column: {col.type.sql()}")
        if col.type.kind == "STRING":
            raise AnalysisError(f"String Type should not be used in partition column[{col.name}].")
        if col.type.kind in ("DECIMAL", "JSON", "VARIANT"):
            raise AnalysisError(f"Invalid partition column type: {col.type.sql()}")
        if col.name in names:
            raise AnalysisError(f"Duplicated partition column {col.name}")
        names.append(col.name)
    if stmt.partition_kind == "RANGE" and any(d.kind == "IN" for d in stmt.partitions):
        raise AnalysisError("Only support LESS THAN or fixed range partition in RANGE partition")
    if stmt.partition_kind == "LIST" and any(d.kind != "IN" for d in stmt.partitions):
        raise AnalysisError("Only support VALUES IN in LIST partition")
    if stmt.auto_partition and stmt.partition_kind == "RANGE":
        col = next(c for c in columns if c.name == names[0])
        if col.type.kind not in ("DATE", "DATETIME"):
            raise AnalysisError("auto create partition only support date and datetime type "
                                "column in range partition")
        if col.nullable:
            raise AnalysisError("AUTO RANGE PARTITION doesn't support NULL column")
        if stmt.auto_unit not in AUTO_UNITS:
            raise AnalysisError(f"date_trunc function time unit param only support argument is "
                                f"{'|'.join(AUTO_UNITS)}")
    return PartitionInfo(stmt.partition_kind, names, stmt.auto_partition,
                         stmt.auto_unit if stmt.partition_kind == "RANGE" else None)


def plan_partitions(table: OlapTable, descs: list[PartitionDesc],
                    existing: list[Partition]) -> list[tuple[str, list | None, list | None, list | None]]:
    """(name, lower, upper, values) for each new partition, validated against `existing`."""
    info = table.partition_info
    types = [table.column(c).type for c in info.columns]
    out: list[tuple[str, list | None, list | None, list | None]] = []
    placed = list(existing)
    names = {p.name.lower() for p in existing}
    for d in descs:
        if d.name.lower() in names:
            raise DdlError(f"Duplicate partition name {d.name}")
        names.add(d.name.lower())
        if d.kind == "IN":
            values = [validate_bound(types, v, d.name) for v in d.values or []]
            check_list_values(types, values, placed)
            placed.append(Partition(0, d.name, None, None, values, 0, 0))
            out.append((d.name, None, None, values))
            continue
        upper = validate_bound(types, d.upper or [], d.name)
        if d.kind == "LESS_THAN":
            lower = _previous_upper(types, placed, upper)
        else:
            lower = validate_bound(types, d.lower or [], d.name)
        check_range(types, d.name, lower, upper, placed)
        placed.append(Partition(0, d.name, lower, upper, None, 0, 0))
        out.append((d.name, lower, upper, None))
    return out


def _previous_upper(types: list[DataType], placed: list[Partition], upper: list) -> list:
    """A LESS THAN partition starts where the previous one (by range) ends, or at MIN."""
    from catalog.partitions import compare_bounds
    best: list = []
    for p in placed:
        if compare_bounds(types, p.upper, upper) <= 0 and compare_bounds(types, p.upper, best) > 0:
            best = p.upper
    return best


def new_table(stmt: CreateTableStmt, table_id: int, base_index_id: int) -> OlapTable:
    """The OlapTable a CREATE TABLE describes (no partitions yet); raises on invalid input."""
    check_table_name(stmt.name)
    for c in stmt.columns:
        check_column_name(c.name)
    if stmt.engine not in ("olap",):
        raise AnalysisError(f"Unknown engine name: {stmt.engine}")
    if not stmt.columns:
        raise AnalysisError("Table should contain at least one column")
    keys_type, columns = analyze_columns(stmt)
    distribution = analyze_distribution(stmt, keys_type, columns)
    partition_info = analyze_partition_info(stmt, columns)
    table = OlapTable(table_id, stmt.name, columns, keys_type, partition_info, distribution,
                      dict(stmt.properties), stmt.comment, base_index_id,
                      create_time=time.time())
    table.mtmv = stmt.mtmv
    table.indexes[base_index_id] = MaterializedIndexMeta(
        base_index_id, stmt.name, [c.name for c in columns], keys_type)
    analyze_merge_on_write(table.properties, keys_type)  # unique_model.py
    analyze_sequence(table.properties, keys_type, columns)
    table.hidden_columns = build_hidden_columns(keys_type, table.properties, columns)
    analyze_bloom_filter(table.properties, columns, keys_type)  # index_rules.py
    table.table_indexes = create_table_indexes(stmt.indexes, columns, keys_type)
    check_compaction_properties(table.properties)
    check_known(stmt.properties)  # after every other rule, as Doris's createOlapTable
    return table


IdAllocator = Callable[[], int]
