"""Explicit partition selection: `FROM t PARTITION (p1, p2)` / `TEMPORARY PARTITION (tp)`.

Doris binds the names to partition ids before planning (Nereids BindRelation.getPartitionIds)
and the scan reads only those partitions; predicates may prune them further. An unknown name
fails the query: `Partition: p9 is not exists on table internal.db.t`. INSERT and DELETE take
the same clause (their own messages, in their handlers).

The parser (`server/parser/partition_names.py`) brings every spelling to sqlglot's
`PARTITION (...)`, a temporary selection with `TEMPORARY_MARK` as its first name.
"""

from __future__ import annotations

from sqlglot import exp

from catalog.errors import AnalysisError
from catalog.model import OlapTable, Partition

TEMPORARY_MARK = "__minidoris_temporary__"


def names_of(table: exp.Table) -> tuple[list[str], bool] | None:
    """(partition names, temporary?) of a table reference; None without a PARTITION clause."""
    part = table.args.get("partition")
    if part is None:
        return None
    names = [e.name for e in part.expressions]
    temporary = bool(names) and names[0] == TEMPORARY_MARK
    return (names[1:] if temporary else names), temporary


def find_partition(table: OlapTable, name: str, temporary: bool) -> Partition | None:
    """A formal partition, or with `temporary` a temporary one, by name (case-insensitive)."""
    if not temporary:
        return table.partition_by_name(name)
    low = name.lower()
    temps = getattr(table, "temp_partitions", {})
    return next((p for p in temps.values() if p.name.lower() == low), None)


def selected_partitions(table: OlapTable, node: exp.Table, db: str) -> list[Partition] | None:
    """The partitions a FROM item names, in the table's order; None: no PARTITION clause."""
    spec = names_of(node)
    if spec is None:
        return None
    names, temporary = spec
    out: dict[int, Partition] = {}
    for name in names:
        p = find_partition(table, name, temporary)
        if p is None:
            raise AnalysisError(
                f"Partition: {name} is not exists on table internal.{db}.{table.name}")
        out[p.partition_id] = p
    return [out[k] for k in sorted(out)]
