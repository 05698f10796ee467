"""Schema change: ALTER TABLE ADD / DROP / MODIFY / RENAME COLUMN, ORDER BY, MODIFY COMMENT.

Doris's SchemaChangeHandler rules and messages. Each statement is analysed on a copy of the
table's schema (`_Plan`), clause by clause, then applied in one of two ways:

  * light (Doris's `light_schema_change`, on unless the table says "false"): ADD / DROP of a
    value column, RENAME, comments, VARCHAR widening. One journal entry `schema_change`
    carries the table's new schema; the tablets get the new TabletSchema (Tablet.set_schema)
    and rowsets written before keep their columns: readers match columns by Doris's column
    unique id (storage/column_mapping.py), giving a column a rowset lacks its DEFAULT (or
    NULL) and never reading a dropped one; compaction writes the new schema.
  * heavy (key columns added or dropped, a type changed, columns reordered): a job rewrites
    every changed index into new tablets and swaps them in atomically
    (catalog/schema_change_job.py, on the machinery of catalog/rollup_job.py).

Column unique ids are given at a table's first schema change (its columns in order), with the
names they had then (`OlapTable.origin_column_names`) for rowsets written before.

    op             data
    schema_change  {db, table, schema: {columns, indexes: {index id: [names]}, comment,
                    properties, partition_columns, distribution_columns, table_indexes,
                    next_column_uid, origin_column_names}, job: the FINISHED job, next_id}
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from catalog.errors import DdlError
from catalog.create_table import (check_nested_type, json_default_error, json_key_error,
                                  nested_key_error)
from catalog.index_journal import update_tablet_schemas
from catalog.model import AGG_KEYS, UNIQUE_KEYS, Column, OlapTable, TableIndex
from catalog.statements import (AddColumnClause, ColumnDef, ColumnPosition, DropColumnClause,
                                ModifyColumnClause, ModifyColumnCommentClause,
                                ModifyTableCommentClause, RenameColumnClause,
                                ReorderColumnsClause, SchemaChangeStmt)
from storage.types import DataType

if TYPE_CHECKING:
    from catalog.catalog import Catalog

_INT_RANK = {"TINYINT": 1, "SMALLINT": 2, "INT": 3, "BIGINT": 4, "LARGEINT": 5}
_STRING_KINDS = ("CHAR", "VARCHAR", "STRING")


@dataclass
class _Plan:
    """The table's schema being changed: base columns and every rollup's column list."""

    table: OlapTable
    columns: list[Column]
    indexes: dict[int, list[str]]
    comment: str
    properties: dict[str, str]
    partition_columns: list[str]
    distribution_columns: list[str]
    table_indexes: list[TableIndex]
    next_uid: int
    origin: dict[int, str]
    heavy: bool = False
    changed_indexes: set[int] = field(default_factory=set)  # rewritten by a heavy job
    type_changed: dict[str, DataType] = field(default_factory=dict)
    added: set[str] = field(default_factory=set)

    def column(self, name: str) -> Column | None:
        low = name.lower()
        return next((c for c in self.columns if c.name.lower() == low), None)

    def schema(self) -> dict:
        return {"columns": [c.to_dict() for c in self.columns],
                "indexes": {str(k): v for k, v in self.indexes.items()},
                "comment": self.comment, "properties": self.properties,
                "partition_columns": self.partition_columns,
                "distribution_columns": self.distribution_columns,
                "table_indexes": [i.to_dict() for i in self.table_indexes],
                "next_column_uid": self.next_uid,
                "origin_column_names": {str(k): v for k, v in self.origin.items()}}


def plan_for(table: OlapTable) -> _Plan:
    columns = copy.deepcopy(table.columns)
    next_uid, origin = table.next_column_uid, dict(table.origin_column_names)
    if next_uid == 0:  # the first schema change: ids for the columns as they are
        for uid, c in enumerate(columns):
            c.unique_id = uid
        origin = {c.unique_id: c.name for c in columns}
        next_uid = len(columns)
    return _Plan(table, columns,
                 {i.index_id: list(i.columns) for i in table.rollups(state=None)},
                 table.comment, dict(table.properties), list(table.partition_info.columns),
                 list(table.distribution.columns), copy.deepcopy(table.table_indexes),
                 next_uid, origin)


def analyze(table: OlapTable, stmt: SchemaChangeStmt) -> _Plan:
    plan = plan_for(table)
    light_enabled = table.properties.get("light_schema_change", "true").lower() != "false"
    before = plan.schema()
    for clause in stmt.clauses:
        _CLAUSES[type(clause)](plan, clause)
    if [c.is_key for c in plan.columns] != sorted((c.is_key for c in plan.columns),
                                                  reverse=True):
        raise DdlError(f"Invalid column order. value should be after key. index[{table.name}]")
    if plan.schema() == before and not plan.heavy:
        raise DdlError("Nothing is changed. please check your alter stmt.")
    if not light_enabled and (plan.added or _dropped(table, plan)):
        plan.heavy = True
        plan.changed_indexes.add(table.base_index_id)
    return plan


def _dropped(table: OlapTable, plan: _Plan) -> bool:
    return len(plan.columns) - len(plan.added) < len(table.columns)


# -- ADD COLUMN --------------------------------------------------------------------------------
def _add_columns(plan: _Plan, clause: AddColumnClause) -> None:
    table = plan.table
    target = _target_index(table, clause.rollup)
    new_names = {c.name.lower() for c in clause.columns}
    for cdef in clause.columns:
        col = _new_column(plan, cdef)
        if plan.column(col.name) is not None:
            if col.name.lower() in plan.added and col.name.lower() in new_names:
                raise DdlError(f"Repeatedly add column: {col.name}")
            raise DdlError(f"Can not add column which already exists in base table: {col.name}")
        col.unique_id = plan.next_uid
        plan.next_uid += 1
        _insert(plan.columns, col, clause.position, key_of=lambda c: c.is_key)
        plan.added.add(col.name.lower())
        if col.is_key:
            plan.heavy = True
            plan.changed_indexes.add(table.base_index_id)
        if target is not None:
            names = plan.indexes[target]
            pos = clause.position
            _insert(names, col.name, pos, key_of=lambda n: (plan.column(n) or col).is_key)
            if col.is_key:  # a rollup's new key reorders its rows: rebuilt
                plan.changed_indexes.add(target)


def _new_column(plan: _Plan, cdef: ColumnDef) -> Column:
    keys_type, name = plan.table.keys_type, cdef.name
    if cdef.auto_increment:
        raise DdlError(f"Can not add auto-increment column {name}")
    is_key, agg = cdef.key, cdef.aggregation
    if keys_type == AGG_KEYS:
        if is_key and agg is not None:
            raise DdlError(f"Can not assign aggregation method on key column: {name}")
        if agg is None:
            is_key = True
        elif agg == "SUM" and cdef.default is not None and cdef.default != "0":
            raise DdlError(f"The default value of '{name}' with SUM aggregation function must "
                           f"be zero")
    elif keys_type == UNIQUE_KEYS:
        if agg is not None and is_key:
            raise DdlError(f"Can not assign aggregation method on column in Unique data model "
                           f"table: {name}")
        agg = None if is_key else "REPLACE"
    else:
        if agg is not None and is_key:
            raise DdlError(f"Can not assign aggregation method on column in Duplicate data "
                           f"model table: {name}")
        agg = None
    if cdef.type.is_nested and is_key:  # ColumnDef.checkKeyColumnType
        raise DdlError(nested_key_error(cdef.type))
    if cdef.type.is_nested:
        check_nested_type(cdef.type)
    if cdef.type.is_json and is_key:
        raise DdlError(json_key_error(name, cdef.type))
    if cdef.type.is_json and cdef.default is not None:
        raise DdlError(json_default_error(cdef.type))
    if (cdef.type.is_nested or cdef.type.is_json) and \
            agg not in (None, "REPLACE", "REPLACE_IF_NOT_NULL"):
        raise DdlError(f"Aggregate type {agg} is not compatible with primitive type "
                       f"{cdef.type.desc_sql()}")
    if cdef.type.kind == "HLL" and keys_type != AGG_KEYS:
        raise DdlError(f"HLL type column can only be in Aggregation data model table: {name}")
    if agg == "BITMAP_UNION" and keys_type != AGG_KEYS:
        raise DdlError("BITMAP_UNION must be used in AGG_KEYS")
    nullable = True if cdef.nullable is None else cdef.nullable
    return Column(name, cdef.type, is_key, agg, nullable, cdef.default, cdef.comment)


def _insert(items: list, item, position: ColumnPosition | None, key_of) -> None:
    """Doris's checkAndAddColumn: AFTER col / FIRST; else a key after the last key, a value at
    the end."""
    name_of = (lambda x: x.name) if isinstance(item, Column) else (lambda x: x)
    if position is not None and position.first:
        items.insert(0, item)
        return
    if position is not None and position.after:
        pos = next((i for i, x in enumerate(items)
                    if name_of(x).lower() == position.after.lower()), None)
        if pos is None:
            raise DdlError(f"Column[{position.after}] does not found")
        items.insert(pos + 1, item)
        return
    if key_of(item):
        last_key = max((i for i, x in enumerate(items) if key_of(x)), default=-1)
        items.insert(last_key + 1, item)
    else:
        items.append(item)


def _target_index(table: OlapTable, name: str | None) -> int | None:
    if name is None:
        return None
    if name == table.name:
        raise DdlError(f"Do not need to assign base index[{name}] to do schema change")
    index = table.index_by_name(name)
    if index is None:
        raise DdlError(f"Index[{name}] does not exist in table[{table.name}]")
    return index.index_id


# -- DROP COLUMN -------------------------------------------------------------------------------
def _drop_column(plan: _Plan, clause: DropColumnClause) -> None:
    table, name = plan.table, clause.name
    target = _target_index(table, clause.rollup)
    col = plan.column(name)
    if target is not None:
        names = plan.indexes[target]
        found = next((n for n in names if n.lower() == name.lower()), None)
        if found is None:
            raise DdlError(f"Column does not exists: {name}")
        names.remove(found)
        plan.changed_indexes.add(target)
        plan.heavy = True
        return
    if table.keys_type == UNIQUE_KEYS and col is not None:
        if col.is_key:
            raise DdlError("Can not drop key column in Unique data model table")
        seq = table.properties.get("function_column.sequence_col")
        if seq and seq.lower() == name.lower():
            raise DdlError(f"Can not drop sequence mapping column[{name}] in Unique data model "
                           f"table[{table.name}]")
    if table.keys_type == AGG_KEYS and col is not None and col.is_key and any(
            c.aggregation in ("REPLACE", "REPLACE_IF_NOT_NULL") for c in plan.columns):
        raise DdlError("Can not drop key column when table has value column with REPLACE "
                       "aggregation method")
    if col is None:
        raise DdlError(f"Column does not exists: {name}")
    for index_id, names in plan.indexes.items():
        index = table.indexes[index_id]
        sources = [n for n in names if n.lower() == name.lower()] + [
            n for n, d in index.define_exprs.items() if name.lower() in
            (s.lower() for s in _define_sources(d))] + [
            n for n in where_columns(index) if n.lower() == name.lower()]
        if sources:
            raise DdlError(f"Can not drop column contained by mv, mv={index.name}")
    if col.name.lower() in (c.lower() for c in plan.partition_columns):
        raise DdlError(f"Partition column[{col.name}] cannot be dropped. index[{table.name}]")
    if col.name.lower() in (c.lower() for c in plan.distribution_columns):
        raise DdlError(f"Distribution column[{col.name}] cannot be dropped. index[{table.name}]")
    plan.columns.remove(col)
    if col.is_key:
        plan.heavy = True
        plan.changed_indexes.add(table.base_index_id)
    bloom = [c.strip() for c in plan.properties.get("bloom_filter_columns", "").split(",")
             if c.strip() and c.strip().lower() != col.name.lower()]
    if "bloom_filter_columns" in plan.properties:
        plan.properties["bloom_filter_columns"] = ", ".join(bloom)
        if not bloom:
            del plan.properties["bloom_filter_columns"]
    plan.table_indexes = [i for i in plan.table_indexes
                          if col.name.lower() not in (c.lower() for c in i.columns)]


def _define_sources(define: list[str]) -> list[str]:
    from catalog.index_rows import define_sources
    return define_sources(define)


def where_columns(index) -> list[str]:
    from catalog.index_rows import where_columns as columns
    return columns(index)


# -- RENAME COLUMN, comments -------------------------------------------------------------------
def _rename_column(plan: _Plan, clause: RenameColumnClause) -> None:
    old, new = clause.old, clause.new
    if old == new:
        raise DdlError("Same column name")
    col = plan.column(old)
    if col is None:
        raise DdlError(f"Column[{old}] does not exists")
    if plan.column(new) is not None and new.lower() != old.lower():
        raise DdlError(f"Column name[{new}] is already used")
    for index_id, names in plan.indexes.items():
        index = plan.table.indexes[index_id]
        if any(col.name.lower() in (s.lower() for s in _define_sources(d))
               for d in index.define_exprs.values()) or \
                col.name.lower() in (n.lower() for n in where_columns(index)):
            raise DdlError(f"Can not rename column contained by mv, mv={index.name}")
        plan.indexes[index_id] = [new if n == col.name else n for n in names]

    def renamed(names: list[str]) -> list[str]:
        return [new if n.lower() == col.name.lower() else n for n in names]

    plan.partition_columns = renamed(plan.partition_columns)
    plan.distribution_columns = renamed(plan.distribution_columns)
    for i in plan.table_indexes:
        i.columns = renamed(i.columns)
    for prop in ("bloom_filter_columns", "function_column.sequence_col"):
        if prop in plan.properties:
            plan.properties[prop] = ", ".join(renamed(
                [c.strip() for c in plan.properties[prop].split(",")]))
    col.name = new


def _modify_comment(plan: _Plan, clause: ModifyColumnCommentClause) -> None:
    col = plan.column(clause.name)
    if col is None:
        raise DdlError(f"Unknown column: {clause.name}")
    col.comment = clause.comment


def _table_comment(plan: _Plan, clause: ModifyTableCommentClause) -> None:
    plan.comment = clause.comment


# -- MODIFY COLUMN, ORDER BY -------------------------------------------------------------------
def _modify_column(plan: _Plan, clause: ModifyColumnClause) -> None:
    table, cdef = plan.table, clause.column
    orig = plan.column(cdef.name)
    is_key = cdef.key or (orig is not None and orig.is_key and cdef.aggregation is None)
    if table.keys_type == AGG_KEYS:
        if is_key and cdef.aggregation is not None:
            raise DdlError(f"Can not assign aggregation method on key column: {cdef.name}")
        if not is_key and cdef.aggregation is None:
            raise DdlError(f"Aggregate method must be specified for value column: {cdef.name}")
        agg = cdef.aggregation
    elif table.keys_type == UNIQUE_KEYS:
        if cdef.aggregation is not None and is_key:
            raise DdlError(f"Can not assign aggregation method on column in Unique data model "
                           f"table: {cdef.name}")
        agg = None if is_key else "REPLACE"
    else:
        if cdef.aggregation is not None and is_key:
            raise DdlError(f"Can not assign aggregation method on column in Duplicate data "
                           f"model table: {cdef.name}")
        agg = None
    _target_index(table, clause.rollup)
    if clause.rollup is not None and clause.position is None:
        raise DdlError("Do not need to specify index name when just modifying column type")
    if orig is None:
        raise DdlError(f"Column[{cdef.name}] does not exists")
    nullable = orig.nullable if cdef.nullable is None else cdef.nullable
    new = Column(orig.name, cdef.type, is_key, agg, nullable, cdef.default, cdef.comment,
                 orig.auto_increment, orig.unique_id, orig.auto_increment_start)
    if new != orig:
        _check_change_allowed(orig, new)
        for index_id in plan.indexes:
            if table.indexes[index_id].define_exprs:
                raise DdlError(f"Can not modify column contained by mv, mv="
                               f"{table.indexes[index_id].name}")
        if orig.name.lower() in (c.lower() for c in plan.partition_columns):
            raise DdlError(f"Can not modify partition column[{orig.name}]. index[{table.name}]")
        if orig.name.lower() in (c.lower() for c in plan.distribution_columns) and \
                orig.type != new.type:
            raise DdlError(f"Can not modify distribution column[{orig.name}]. "
                           f"index[{table.name}]")
    if orig.type != new.type and not _light_type_change(orig.type, new.type):
        plan.heavy = True
        plan.type_changed[orig.name] = new.type
        plan.changed_indexes |= {table.base_index_id, *(
            i for i, names in plan.indexes.items() if orig.name in names)}
    pos = plan.columns.index(orig)
    plan.columns[pos] = new
    if clause.position is not None:
        plan.columns.remove(new)
        _insert(plan.columns, new, clause.position, key_of=lambda c: c.is_key)
        plan.heavy = True
        plan.changed_indexes.add(table.base_index_id)


def _check_change_allowed(orig: Column, new: Column) -> None:
    """Doris's Column.checkSchemaChangeAllowed and ColumnType.isSchemaChangeAllowed."""
    a, b = orig.type, new.type
    if a != b:
        if a.kind in _INT_RANK and b.kind in _INT_RANK:
            ok = _INT_RANK[b.kind] >= _INT_RANK[a.kind]
        elif a.kind in _STRING_KINDS and b.kind in _STRING_KINDS:
            if b.kind != "STRING" and a.kind == "STRING" or (
                    b.kind != "STRING" and b.length < a.length):
                raise DdlError("Cannot shorten string length")
            ok = not (a.kind != "CHAR" and b.kind == "CHAR")
        elif a.kind in _INT_RANK and b.kind in _STRING_KINDS:
            ok = True
            width = {"TINYINT": 4, "SMALLINT": 6, "INT": 11, "BIGINT": 20, "LARGEINT": 40}
            if b.kind != "STRING" and b.length < width[a.kind]:
                raise DdlError(f"Can not change from wider type {a.desc_sql().lower()} to "
                               f"narrower type {b.desc_sql().lower()}")
        elif a.kind == "FLOAT" and b.kind == "DOUBLE" or a.kind == "DATE" and \
                b.kind == "DATETIME" or a.kind == "DECIMAL" and b.kind == "DECIMAL" and \
                b.scale == a.scale and b.precision >= a.precision:
            ok = True
        else:
            ok = False
        if not ok:
            raise DdlError(f"Can not change {a.kind} to {b.kind}")
    if orig.aggregation != new.aggregation:
        raise DdlError("Can not change aggregation type")
    if orig.nullable and not new.nullable:
        raise DdlError("Can not change from nullable to non-nullable")
    if orig.default != new.default:
        raise DdlError("Can not change default value")


def _light_type_change(a: DataType, b: DataType) -> bool:
    """VARCHAR(n) -> VARCHAR(m > n) only changes metadata (Doris's light schema change)."""
    return a.kind == b.kind == "VARCHAR"


def _reorder(plan: _Plan, clause: ReorderColumnsClause) -> None:
    table = plan.table
    target = _target_index(table, clause.rollup)
    current = [c.name for c in plan.columns] if target is None else plan.indexes[target]
    seen: set[str] = set()
    ordered = []
    for name in clause.columns:
        match = next((n for n in current if n.lower() == name.lower()), None)
        if match is None:
            raise DdlError(f"Column[{name}] not exists")
        if name.lower() in seen:
            raise DdlError(f"Reduplicative column[{name}]")
        seen.add(name.lower())
        ordered.append(match)
    if len(ordered) != len(current):
        raise DdlError("Reorder stmt should contains all columns")
    if ordered == current:
        return
    if target is None:
        by_name = {c.name: c for c in plan.columns}
        plan.columns = [by_name[n] for n in ordered]
        plan.changed_indexes.add(table.base_index_id)
    else:
        plan.indexes[target] = ordered
        plan.changed_indexes.add(target)
    plan.heavy = True


_CLAUSES = {
    AddColumnClause: _add_columns,
    DropColumnClause: _drop_column,
    RenameColumnClause: _rename_column,
    ModifyColumnCommentClause: _modify_comment,
    ModifyTableCommentClause: _table_comment,
    ModifyColumnClause: _modify_column,
    ReorderColumnsClause: _reorder,
}


# -- journal -----------------------------------------------------------------------------------
def apply_schema(cat: Catalog, table: OlapTable, schema: dict) -> None:
    """Give the table (catalog) a schema made by `_Plan.schema()`; tablets follow."""
    table.columns = [Column.from_dict(c) for c in schema["columns"]]
    for index_id, names in schema["indexes"].items():
        if int(index_id) in table.indexes:
            table.indexes[int(index_id)].columns = list(names)
    table.comment = schema["comment"]
    table.properties = dict(schema["properties"])
    table.partition_info.columns = list(schema["partition_columns"])
    table.distribution.columns = list(schema["distribution_columns"])
    table.table_indexes = [TableIndex.from_dict(i) for i in schema["table_indexes"]]
    table.next_column_uid = int(schema["next_column_uid"])
    table.origin_column_names = {int(k): v for k, v in schema["origin_column_names"].items()}
    base = table.indexes[table.base_index_id]
    base.columns = [c.name for c in table.columns]


def apply_schema_change(cat: Catalog, data: dict) -> None:
    from catalog.rollup_job import RollupJob

    table = cat.dbs[data["db"]].tables[data["table"]]
    apply_schema(cat, table, data["schema"])
    update_tablet_schemas(cat, table)
    if "job" in data:
        job = RollupJob.from_dict(data["job"])
        cat.alter_jobs[job.job_id] = job
        cat.next_id = max(cat.next_id, data["next_id"])


APPLY = {"schema_change": apply_schema_change}



def alter_columns(cat: Catalog, db: str | None, stmt: SchemaChangeStmt) -> None:
    """Run one ALTER TABLE of column clauses: journal a light change, or start a job."""
    from catalog import rollup_ddl, rollup_job, schema_change_job
    from catalog.load import table_lock
    from catalog.load_gate import load_gate

    db_name, table_id = rollup_ddl.resolve(cat, stmt.db or db, stmt.table)
    with cat.lock:  # a heavy change is a job: journaled WAITING_TXN, the statement returns
        table = cat.get_table(db_name, stmt.table)
        rollup_ddl.check_normal(cat, table)
        plan = analyze(table, stmt)
        jobs = schema_change_job.create_job(cat, db_name, table, plan, stmt.properties) \
            if plan.heavy else []
    if jobs:
        schema_change_job.start(cat, jobs)
        return
    # a light change swaps the tablets' schema: loads in flight finish first
    with load_gate(table_id).exclusive(), table_lock(table_id), cat.lock:
        table = cat.get_table(db_name, stmt.table)
        rollup_ddl.check_normal(cat, table)
        plan = analyze(table, stmt)  # again: the table may have changed meanwhile
        if plan.heavy:
            jobs = schema_change_job.create_job(cat, db_name, table, plan, stmt.properties)
        else:
            # Doris records a light change as a FINISHED job "for compatibility": SHOW ALTER
            # TABLE COLUMN lists it (timeout 1 s, no transaction)
            base = table.indexes[table.base_index_id]
            now = cat.clock()
            job = rollup_job.RollupJob(cat._alloc_id(), db_name, table.table_id, table.name,
                                       base.index_id, base.name, base.index_id, base.name, -1,
                                       now, 1, state=rollup_job.FINISHED, finish_time=now,
                                       kind="SCHEMA_CHANGE")
            cat._log("schema_change", {"db": db_name, "table": table.name,
                                       "schema": plan.schema(), "job": job.to_dict(),
                                       "next_id": cat.next_id})
    schema_change_job.start(cat, jobs)
