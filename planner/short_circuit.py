"""Short-circuit point queries: a light plan for a single-table key lookup (issue 14 item 4).

Doris 2.x answers `SELECT ... FROM t WHERE k1 = ? AND k2 = ?` (equality on the whole key of a
merge-on-write Unique table) without the planner's fragments: the FE caches a light plan per
statement, picks the partition and bucket from the constants and asks the one BE for the row
(EXPLAIN prints SHORT-CIRCUIT). Here the same shape of statement, on any OLAP table whose WHERE
fixes a prefix of the key columns (at least the first) by equality with constants, gets:

    plan_point(stmt, catalog, db, values)   once per statement template: the table, the columns
                                            read, the result names and types, which literal
                                            fixes which key column (a PointPlan), or None when
                                            the statement is not of that shape
    bind_point(plan, values, catalog)       per execution: the constants as storage predicates
                                            (only when they are *exactly* the comparison, as
                                            planner/pushdown.py decides; else None: the general
                                            path), partition and bucket pruning straight from
                                            them, and the snapshot of each remaining tablet
                                            captured at its partition's visible version

The shape: `SELECT <*, columns, columns AS alias> FROM [db.]t [alias] WHERE <conjunction of
key = literal>`, nothing else (no joins, GROUP BY, ORDER BY, LIMIT, hints, PARTITION clause),
each key column fixed once, no other literal anywhere, no BITMAP/HLL column in the result. What a general plan of such a statement
does and this one does too: `__DORIS_DELETE_SIGN__ = 0` on tables with the sign (binder.py), the
partitions and buckets the predicates allow (prune_partitions.py, prune_buckets.py), the base
index read with the key predicates pushed into storage (short key index, merge-on-read).
Session settings that change that (show_hidden_columns, skip_delete_sign) are the caller's
to check. A plan stays valid while the catalog's ddl_epoch does (the caller's cache) and the
table is the same object (checked here).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from sqlglot import exp

from catalog.errors import DorisError
from catalog.system_dbs import system_db
from catalog.values import INT_RANGE
from planner import logical as L
from planner.naming import output_name
from planner.prune_buckets import prune_buckets
from planner.prune_partitions import surviving_partitions
from planner.pushdown import storage_predicates
from storage import bucket_of
from storage.schema import DELETE_SIGN
from storage.types import OBJECT_KINDS, DataType

_SELECT_ARGS = {"expressions", "from", "from_", "where"}
_TABLE_ARGS = {"this", "db", "alias"}


@dataclass
class PointPlan:
    db: str
    table_name: str
    table: object                  # the OlapTable planned against (identity checked per use)
    stmt: exp.Select               # the statement parsed once (privilege checks)
    columns: list[str]             # storage columns read, the result's in order
    names: list[str]               # result column names
    types: list[DataType]          # result column types (the columns' declared types)
    keys: list[tuple[str, int, bool, bool]]  # (key column, literal index, negated, is string)
    full_key: bool                 # every key column is fixed (at most one row per key)
    scan: L.OlapScan = field(repr=False)  # columns and types for pushdown's conversions
    sign_predicates: list = field(default_factory=list)  # __DORIS_DELETE_SIGN__ = 0


_DIGITS = re.compile(r"\d+")

BUSY = object()  # plan_point could not look at the catalog now (its lock was held): ask again


def plan_point(stmt: object, catalog, db: str | None, values: tuple[str, ...],
               wait: bool = False) -> PointPlan | None:
    """The light plan of `stmt` (parsed from a text whose literals are `values`, in text
    order), None when it is not a key lookup of the shape in the module docstring, or BUSY
    when the catalog lock was held (the event loop never waits for it; with `wait`, a worker
    thread does)."""
    if not isinstance(stmt, exp.Select) or stmt.meta:
        return None
    if any(v for k, v in stmt.args.items() if k not in _SELECT_ARGS):
        return None
    source = stmt.args.get("from") or stmt.args.get("from_")
    where = stmt.args.get("where")
    node = source.this if source is not None else None
    if where is None or not isinstance(node, exp.Table) or not isinstance(node.this, exp.Identifier):
        return None
    if any(v for k, v in node.args.items() if k not in _TABLE_ARGS):
        return None
    alias = node.args.get("alias")
    if alias is not None and alias.args.get("columns"):
        return None
    db_name = node.db or db
    if not db_name or system_db(db_name) is not None:
        return None
    if not catalog.lock.acquire(blocking=wait):
        return BUSY
    try:
        database = catalog.get_db(db_name)
        if node.name in database.views:
            return None
        table = catalog.get_table(db_name, node.name)
    except DorisError:
        return None  # the general path reports it
    finally:
        catalog.lock.release()
    relation = node.alias or node.name  # qualifiers match it exactly, as scope.py does
    keys = _fixed_keys(where.this, table, relation, values)
    if keys is None:
        return None
    columns, names = _select_list(stmt.expressions, table, relation)
    if columns is None:
        return None
    full = [*table.columns, *table.hidden_columns]
    scan = L.OlapScan(db_name, table.name, node.alias or node.name, [c.name for c in full],
                      [c.name for c in full], [], column_types={c.name: c.type for c in full})
    sign = []
    if any(c.name == DELETE_SIGN for c in table.hidden_columns):
        sign = storage_predicates(exp.EQ(this=exp.column(DELETE_SIGN, quoted=True),
                                         expression=exp.Literal.number(0)), scan)[0]
    return PointPlan(db_name, table.name, table, stmt, columns, names,
                     [table.column(c).type for c in columns], keys,
                     len(keys) == len(table.key_columns), scan, sign)


def shows_short_circuit(plan: PointPlan) -> bool:
    """Whether Doris would plan this lookup as its short-circuit point query, which EXPLAIN
    marks `SHORT-CIRCUIT` under the OlapScanNode: the whole key of a merge-on-write Unique
    table with `"store_row_column" = "true"` (Doris's row store; minidoris keeps no row store,
    and its light plan serves the other tables too, unmarked)."""
    props = plan.table.properties
    return plan.full_key and plan.table.keys_type == "UNIQUE_KEYS" and \
        props.get("enable_unique_key_merge_on_write") == "true" and \
        str(props.get("store_row_column", "")).lower() == "true"


def _fixed_keys(where: exp.Expression, table, relation: str,
                values: tuple[str, ...]) -> list[tuple[str, int, bool, bool]] | None:
    """(key column, literal index, negated, is string) per conjunct, when every conjunct is
    `key = literal` on a distinct key column, they fix a prefix of the key, and the statement's
    literals are exactly these, in text order."""
    conjuncts = list(where.flatten()) if isinstance(where, exp.And) else [where]
    key_names = [c.name for c in table.key_columns]
    fixed: list[tuple[str, int, bool, bool]] = []
    for i, conj in enumerate(conjuncts):
        if type(conj) is not exp.EQ:
            return None
        col, lit = conj.this, conj.expression
        if not isinstance(col, exp.Column):
            col, lit = lit, col
        name = _column_name(col, table, relation)
        negated = isinstance(lit, exp.Neg)
        if negated:
            lit = lit.this
        if name is None or name not in key_names or not isinstance(lit, exp.Literal):
            return None
        if negated and lit.is_string:
            return None
        if i >= len(values) or lit.this != values[i] or any(k[0] == name for k in fixed):
            return None
        fixed.append((name, i, negated, lit.is_string))
    if len(fixed) != len(values):
        return None  # a literal elsewhere (the select list, a function argument)
    named = {k[0] for k in fixed}
    if key_names[:len(named)] != [k for k in key_names if k in named]:
        return None  # not a prefix of the key
    return fixed


def _column_name(col: exp.Expression, table, relation: str) -> str | None:
    if not isinstance(col, exp.Column) or not isinstance(col.this, exp.Identifier):
        return None
    if any(v for k, v in col.args.items() if k not in ("this", "table")):
        return None
    if col.table and col.table != relation:
        return None
    found = table.column(col.name)
    return found.name if found is not None else None


def _select_list(items: list, table, relation: str) -> tuple[list[str] | None, list[str]]:
    columns: list[str] = []
    names: list[str] = []
    for item in items:
        target = item.this if isinstance(item, exp.Alias) else item
        if isinstance(target, exp.Star) and not isinstance(item, exp.Alias):
            if any(c.type.kind in OBJECT_KINDS for c in table.columns):
                return None, []
            columns += [c.name for c in table.columns]
            names += [c.name for c in table.columns]
            continue
        name = _column_name(target, table, relation)
        if name is None or table.column(name).type.kind in OBJECT_KINDS:
            return None, []  # BITMAP / HLL values are shown the general path's way
        columns.append(name)
        names.append(output_name(item))
    return columns, names


def bind_point(plan: PointPlan, values: tuple[str, ...], catalog) -> tuple[list, list] | None:
    """(storage predicates, captured TabletSnapshots in scan order) for one execution, or None
    when the general path must run it: a constant that is not exactly its comparison (`k =
    1.5` on an integer key), the catalog lock held by someone else (never waited for: this may
    run on the protocol's event loop), or the table replaced. The caller releases the
    snapshots."""
    predicates = list(plan.sign_predicates)
    for key in plan.keys:
        got = _key_predicate(plan, key, values[key[1]])
        if got is None:
            return None
        predicates.append(got)
    if not catalog.lock.acquire(blocking=False):
        return None
    try:
        try:
            table = catalog.get_table(plan.db, plan.table_name)
        except DorisError:
            return None
        if table is not plan.table:
            return None
        parts = table.sorted_partitions()
        if len(parts) > 1 or table.partition_info.kind in ("RANGE", "LIST"):
            scan = replace(plan.scan, predicates=predicates, tablets=[])
            try:
                keep = surviving_partitions(table, scan)
            except TypeError:
                keep = set(table.partitions)
            parts = [p for p in parts if p.partition_id in keep]
        engine = catalog.engine
        snapshots = []
        for p in parts:
            tablets = p.tablets_by_index[table.base_index_id]
            chosen = _buckets(plan, table, predicates, p, tablets)
            snapshots += [engine.get_tablet(tablets[b]).capture(p.visible_version)
                          for b in chosen]
    finally:
        catalog.lock.release()
    return predicates, snapshots


def _key_predicate(plan: PointPlan, key: tuple, text: str):
    """The storage predicate `key = text`, exactly the comparison, or None. Integer and
    VARCHAR/STRING keys are converted here (what pushdown.storage_predicates gives for them,
    without building a sqlglot comparison); other types go through pushdown."""
    from storage import ColumnPredicate

    name, _, negated, is_string = key
    dtype = plan.scan.column_types[name]
    if dtype.is_integer and not is_string and dtype.kind in INT_RANGE:
        if not _DIGITS.fullmatch(text):
            return None
        value = -int(text) if negated else int(text)
        lo, hi = INT_RANGE[dtype.kind]
        return ColumnPredicate(name, "=", (value,)) if lo <= value <= hi else None
    if is_string and dtype.kind in ("VARCHAR", "STRING"):
        return ColumnPredicate(name, "=", (text,))
    lit = exp.Literal.string(text) if is_string else \
        exp.Literal.number("-" + text if negated else text)
    got, exact = storage_predicates(exp.EQ(this=exp.column(name, quoted=True), expression=lit),
                                    plan.scan)
    return got[0] if exact and len(got) == 1 else None


def _buckets(plan: PointPlan, table, predicates: list, partition, tablets: list) -> list[int]:
    """The buckets of `partition` a lookup reads: the one its constants hash to when they fix
    every distribution column (storage.bucket_of, as rows were routed at load), else all."""
    dist = table.distribution
    if dist.kind == "HASH" and dist.columns:
        fixed = {p.column: p.values[0] for p in predicates if p.op == "="}
        if all(c in fixed for c in dist.columns):
            types = [plan.scan.column_types[c] for c in dist.columns]
            bucket = bucket_of(tuple(fixed[c] for c in dist.columns), types, partition.buckets)
            if bucket is not None:
                return [bucket]
            scan = replace(plan.scan, predicates=predicates, tablets=[
                L.ScanTablet(tid, partition.visible_version, partition.partition_id, 0, b)
                for b, tid in enumerate(tablets)])
            prune_buckets(scan, list(dist.columns), {partition.partition_id: partition.buckets})
            return [t.bucket for t in scan.tablets]
    return list(range(len(tablets)))
