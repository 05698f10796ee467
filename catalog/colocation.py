"""Colocation groups (Doris's ColocateTableIndex and ColocateGroupSchema; seed 000).

A group belongs to a database (`"colocate_with" = "g"` names it; the id prints `dbId.groupId`,
the full name `dbId_g`; a name starting with `__global__` is cluster-wide with db id 0). Its
schema is the bucket count, the replication number and the distribution columns' types by
position (VARCHAR/STRING lengths may differ, INT vs BIGINT may not). All tables of a group share
one bucket sequence `seq`: bucket i of every partition and index of every table has its
replicas on the backends `seq[i]`, so equal distribution keys meet on the same backends and a
join on them needs no exchange.

Stability: `pending` holds the buckets whose tablets do not match `seq` yet (the sequence was
changed by relocation/balance, or a table joined with another placement). A group is stable
when nothing is pending and every backend of `seq` is available; the tablet scheduler
(`catalog/tablet_scheduler.py`) changes `seq` and then moves the tablets bucket by bucket.

Journal operations (functions in `APPLY`): `colocate_join` (also carried inside `create_table`
as its `"colocate"` entry, so a table and its membership appear atomically), `colocate_leave`,
`colocate_set_seq`, `colocate_move_bucket`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from catalog.errors import CodedDdlError, DdlError
from storage.types import DataType

if TYPE_CHECKING:
    from catalog.catalog import Catalog
    from catalog.model import OlapTable

GLOBAL_PREFIX = "__global__"
COLOCATE_ERRNO = 5063  # Doris's ErrorCode for the ERR_COLOCATE_* schema errors (SQLSTATE 42000)


@dataclass
class ColocateGroup:
    db_id: int
    grp_id: int
    name: str                    # as the user wrote it in colocate_with
    buckets: int
    replication_num: int
    dist_types: list[DataType]
    seq: list[list[int]]         # backends of each bucket index
    table_ids: list[int] = field(default_factory=list)
    pending: set[int] = field(default_factory=set)

    @property
    def group_id(self) -> str:
        return f"{self.db_id}.{self.grp_id}"

    @property
    def full_name(self) -> str:
        return full_group_name(self.db_id, self.name)

    def to_dict(self) -> dict:
        return {"db_id": self.db_id, "grp_id": self.grp_id, "name": self.name,
                "buckets": self.buckets, "replication_num": self.replication_num,
                "dist_types": [t.to_dict() for t in self.dist_types], "seq": self.seq,
                "table_ids": self.table_ids, "pending": sorted(self.pending)}

    @staticmethod
    def from_dict(d: dict) -> ColocateGroup:
        return ColocateGroup(d["db_id"], d["grp_id"], d["name"], d["buckets"],
                             d["replication_num"], [DataType.from_dict(t) for t in d["dist_types"]],
                             [list(b) for b in d["seq"]], list(d.get("table_ids", [])),
                             set(d.get("pending", [])))


def full_group_name(db_id: int, name: str) -> str:
    return name if name.startswith(GLOBAL_PREFIX) else f"{db_id}_{name}"


def group_db_id(db_id: int, name: str) -> int:
    return 0 if name.startswith(GLOBAL_PREFIX) else db_id


class ColocateIndex:
    """All groups, by group id, by full name and by member table."""

    def __init__(self) -> None:
        self.groups: dict[str, ColocateGroup] = {}

    def by_full_name(self, full_name: str) -> ColocateGroup | None:
        return next((g for g in self.groups.values() if g.full_name == full_name), None)

    def of_table(self, table_id: int) -> ColocateGroup | None:
        return next((g for g in self.groups.values() if table_id in g.table_ids), None)

    def to_dict(self) -> list[dict]:
        return [g.to_dict() for g in self.groups.values()]

    def load(self, groups: list[dict]) -> None:
        self.groups = {}
        for d in groups:
            g = ColocateGroup.from_dict(d)
            self.groups[g.group_id] = g


# -- schema checks (ColocateGroupSchema) --------------------------------------------------------
def _error(message: str) -> CodedDdlError:
    return CodedDdlError(message, COLOCATE_ERRNO, "42000")


def _alloc_text(replicas: int) -> str:
    return f"{{ tag.location.default: {replicas} }}"


def type_name(t: DataType) -> str:
    """How Doris 2.1's Type.toString names a type in these messages."""
    return {"DATE": "DATEV2", "STRING": "TEXT"}.get(t.kind) or (
        f"DATETIMEV2({t.scale})" if t.kind == "DATETIME" else
        f"DECIMALV3({t.precision}, {t.scale})" if t.kind == "DECIMAL" else
        f"{t.kind}({t.length})" if t.kind in ("CHAR", "VARCHAR") else t.kind)


def dist_col_sql(t: DataType) -> str:
    """DistCols of SHOW PROC '/colocation_group', as seed 000 prints it (`int(11)`)."""
    widths = {"TINYINT": 4, "SMALLINT": 6, "INT": 11, "BIGINT": 20, "LARGEINT": 40}
    return f"{t.kind.lower()}({widths[t.kind]})" if t.kind in widths else t.sql()


def _same_type(a: DataType, b: DataType) -> bool:
    # VARCHAR and STRING hash alike when the data is equal, so their lengths may differ.
    if a.kind in ("VARCHAR", "STRING") and b.kind in ("VARCHAR", "STRING"):
        return True
    return a == b


def check_distribution(group: ColocateGroup, table: OlapTable, buckets: int) -> None:
    if buckets != group.buckets:
        raise _error(f"Colocate tables must have same bucket num: {buckets} "
                     f"should be {group.buckets}")
    cols = [table.column(c) for c in table.distribution.columns]
    if len(cols) != len(group.dist_types):
        raise _error(f"Colocate tables distribution columns size must be same: {len(cols)} "
                     f"should be {len(group.dist_types)}")
    for col, want in zip(cols, group.dist_types):
        if not _same_type(want, col.type):
            raise _error(f"Colocate tables distribution columns must have the same data type: "
                         f"{col.name} should be {type_name(want)}")


def check_replication(group: ColocateGroup, replicas: int) -> None:
    if replicas != group.replication_num:
        raise _error(f"Colocate tables must have same replication allocation: "
                     f"{_alloc_text(replicas)} should be {_alloc_text(group.replication_num)}")


def check_table(group: ColocateGroup, table: OlapTable, replicas: int | None = None) -> None:
    """checkColocateSchema: the table's default distribution, every partition's buckets, and
    the replication number (`replicas` for a table being created, else each partition's)."""
    check_distribution(group, table, table.distribution.buckets)
    for p in table.sorted_partitions():
        check_distribution(group, table, p.buckets)
    for r in ([replicas] if replicas is not None else
              [p.replication_num for p in table.sorted_partitions()]):
        check_replication(group, r)


def check_new_group(table: OlapTable) -> None:
    """A table that starts a group: hash distributed, and (for an existing table) all its
    partitions alike."""
    if table.distribution.kind != "HASH":
        raise DdlError("Random distribution for colocate table is unsupported")
    parts = table.sorted_partitions()
    if len({p.buckets for p in parts}) > 1:
        raise DdlError(f"Partitions in table {table.name} have different buckets number")
    if len({p.replication_num for p in parts}) > 1:
        raise DdlError(f"Partitions in table {table.name} have different replica allocation.")


def check_dynamic_partition_buckets(table: OlapTable, group: ColocateGroup | None) -> None:
    raw = table.properties.get("dynamic_partition.buckets")
    if raw is not None and raw.strip().lstrip("-").isdigit() \
            and int(raw) != table.distribution.buckets:
        expected = group.buckets if group is not None else table.distribution.buckets
        raise _error("Dynamic partition buckets must equal the distribution buckets if creating "
                     f"a colocate table: {expected}")


def check_add_partition(cat: Catalog, table: OlapTable, buckets: int, replicas: int) -> None:
    """ADD PARTITION of a colocated table must keep the group's buckets and replication."""
    group = cat.colocation.of_table(table.table_id)
    if group is not None:
        check_distribution(group, table, buckets)
        check_replication(group, replicas)


def check_change_replication(cat: Catalog, table: OlapTable) -> None:
    """ALTER TABLE ... SET replication_num / replication_allocation (OlapTable's
    checkChangeReplicaAllocation)."""
    if cat.colocation.of_table(table.table_id) is not None:
        raise DdlError("Cannot change replication allocation of colocate table.")


# -- bucket sequences ------------------------------------------------------------------------
def initial_seq(available: list[int], buckets: int, replicas: int, start: int) -> list[list[int]]:
    """Bucket i takes the `replicas` least used backends, walking round-robin from position
    start+i: with backends A B C D and 3 replicas this is seed 000's figure (A B C, B C D,
    C D A, D A B, ...), and the backends' counts never differ by more than one."""
    n = len(available)
    counts = {b: 0 for b in available}
    seq = []
    for i in range(buckets):
        pos = (start + i) % n
        order = available[pos:] + available[:pos]
        rank = {b: k for k, b in enumerate(order)}
        chosen = sorted(order, key=lambda b: (counts[b], rank[b]))[:replicas]
        chosen.sort(key=rank.__getitem__)
        for b in chosen:
            counts[b] += 1
        seq.append(chosen)
    return seq


def table_seq(table: OlapTable) -> list[list[int]]:
    """A table's own placement as a sequence (its first partition's base tablets), for a table
    that starts a group by ALTER TABLE (Doris's getArbitraryTabletBucketsSeq)."""
    parts = table.sorted_partitions()
    if not parts:
        return []
    p = parts[0]
    return [list(p.tablets[tid].replicas) for tid in p.tablets_by_index[table.base_index_id]]


def mismatched_buckets(table: OlapTable, seq: list[list[int]]) -> set[int]:
    out = set()
    for p in table.partitions.values():
        for tablet_ids in p.tablets_by_index.values():
            for b, tid in enumerate(tablet_ids):
                if b < len(seq) and set(p.tablets[tid].replicas) != set(seq[b]):
                    out.add(b)
    return out


def group_tables(cat: Catalog, group: ColocateGroup) -> list[OlapTable]:
    ids = set(group.table_ids)
    return [t for db in cat.dbs.values() for t in db.tables.values() if t.table_id in ids]


def is_stable(cat: Catalog, group: ColocateGroup) -> bool:
    if group.pending:
        return False
    return all(b in cat.backends and cat.backends[b].available
               for bucket in group.seq for b in bucket)


def unstable_reason(cat: Catalog, group: ColocateGroup) -> str:
    """ErrorMsg of SHOW PROC '/colocation_group' (Doris's matchGroups wording)."""
    if is_stable(cat, group):
        return ""
    bad = set(group.pending) | {i for i, bucket in enumerate(group.seq)
                                if any(b not in cat.backends or not cat.backends[b].available
                                       for b in bucket)}
    bucket = min(bad)
    for table in group_tables(cat, group):
        for p in table.sorted_partitions():
            tid = p.tablets_by_index[table.base_index_id][bucket]
            return f"get unhealthy tablet {tid} in colocate table. status: COLOCATE_MISMATCH"
    return ""


def info_rows(cat: Catalog) -> list[tuple]:
    """SHOW PROC '/colocation_group' with seed 000's columns plus Doris's ErrorMsg."""
    rows = []
    for g in sorted(cat.colocation.groups.values(), key=lambda g: (g.db_id, g.grp_id)):
        rows.append((g.group_id, g.full_name, ", ".join(str(t) for t in g.table_ids),
                     g.buckets, g.replication_num,
                     ", ".join(dist_col_sql(t) for t in g.dist_types),
                     str(is_stable(cat, g)).lower(), unstable_reason(cat, g)))
    return rows


# -- apply functions ---------------------------------------------------------------------------
def _apply_join(cat: Catalog, data: dict) -> None:
    _, table = cat.find_table_by_id(data["table_id"])
    cat.next_id = max(cat.next_id, data.get("next_id", 0))
    spec = data["group"]
    current = cat.colocation.of_table(table.table_id)
    if current is not None and current.group_id != f"{spec['db_id']}.{spec['grp_id']}":
        remove_table(cat, table.table_id)  # ALTER TABLE to another group: leave the old one
    g = cat.colocation.groups.get(f"{spec['db_id']}.{spec['grp_id']}")
    if g is None:
        g = ColocateGroup.from_dict({**spec, "table_ids": [], "pending": []})
        cat.colocation.groups[g.group_id] = g
    if table.table_id not in g.table_ids:
        g.table_ids.append(table.table_id)
    table.properties["colocate_with"] = g.name
    g.pending |= mismatched_buckets(table, g.seq)


def _apply_leave(cat: Catalog, data: dict) -> None:
    remove_table(cat, data["table_id"])
    try:
        _, table = cat.find_table_by_id(data["table_id"])
    except DdlError:
        return
    table.properties.pop("colocate_with", None)


def remove_table(cat: Catalog, table_id: int) -> None:
    """Take a table out of its group; a group disappears with its last table."""
    g = cat.colocation.of_table(table_id)
    if g is None:
        return
    g.table_ids.remove(table_id)
    if not g.table_ids:
        del cat.colocation.groups[g.group_id]


def _apply_set_seq(cat: Catalog, data: dict) -> None:
    g = cat.colocation.groups.get(data["group_id"])
    if g is None:
        return
    new = [list(b) for b in data["seq"]]
    g.pending |= {i for i, (a, b) in enumerate(zip(g.seq, new)) if set(a) != set(b)}
    g.seq = new


def _apply_move_bucket(cat: Catalog, data: dict) -> None:
    """Every tablet of bucket `bucket` of every table of the group onto `seq[bucket]`: all
    replicas of a bucket move together."""
    g = cat.colocation.groups.get(data["group_id"])
    if g is None:
        return
    b = data["bucket"]
    for table in group_tables(cat, g):
        for p in table.partitions.values():
            for tablet_ids in p.tablets_by_index.values():
                if b < len(tablet_ids):
                    p.tablets[tablet_ids[b]].replicas = list(g.seq[b])
    g.pending.discard(b)


APPLY: dict[str, Callable[[Any, Any], None]] = {
    "colocate_join": _apply_join,
    "colocate_leave": _apply_leave,
    "colocate_set_seq": _apply_set_seq,
    "colocate_move_bucket": _apply_move_bucket,
}
