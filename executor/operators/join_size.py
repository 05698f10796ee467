"""exec_mem_limit for joins: a join whose output would exceed the limit fails before it runs.

A hash join's output is only known once built, and a many-to-many join (a cross product on a
few key values) can be thousands of times larger than its inputs: materialising it would take
the process down instead of failing the query. So before a join whose inputs could possibly
produce more than the limit, the output is bounded cheaply first: each row of one side matches
at most the other side's largest key multiplicity (1 for the usual foreign-key join), so
rows(one side) x max multiplicity(other side) bounds it, the side cheaper to count tried first
(one bincount for a primary key). Only when neither bound fits the limit is the exact count
computed, from both sides' per-key counts joined and multiplied. Semi and anti joins never
grow their input and are not checked, nor are joins done by key lookup on a unique side
(`lookup_join.py`: no more rows than the other side has, plus the unmatched ones).
"""

from __future__ import annotations

import functools

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from executor.errors import ExecutionError

_GROWING = ("inner", "left outer", "right outer", "full outer", "cross")


def check_join_output(left: pa.Table, right: pa.Table, node, mem_limit: int) -> None:
    if not mem_limit or node.kind not in _GROWING or not left.num_rows or not right.num_rows:
        return
    width = left.nbytes / left.num_rows + right.nbytes / right.num_rows
    if left.num_rows * right.num_rows * width <= mem_limit:
        return  # not even a full cross product reaches the limit
    if node.kind == "cross":
        rows = left.num_rows * right.num_rows
    else:
        extra = 0 if node.kind == "inner" else left.num_rows + right.num_rows
        if (_bounded_pairs(left, right, node.left_keys, node.right_keys,
                           int(mem_limit / width) - extra)):
            return
        rows = _matched_pairs(left, right, node.left_keys, node.right_keys)
        if node.kind != "inner":
            rows += left.num_rows + right.num_rows  # unmatched rows, null-extended
    if rows * width > mem_limit:
        raise ExecutionError(
            f"[MEM_LIMIT_EXCEEDED]Query memory usage would exceed exec_mem_limit {mem_limit} "
            f"bytes: the join on {', '.join(node.left_keys) or 'no keys'} produces {rows} rows "
            f"(about {int(rows * width)} bytes); raise it with SET exec_mem_limit = ...")


def _bounded_pairs(left: pa.Table, right: pa.Table, lkeys: list[str], rkeys: list[str],
                   limit_rows: int) -> bool:
    """True when rows(side) x max key multiplicity(other side) shows the join produces at
    most `limit_rows` matched pairs. The side whose keys are cheaper to count goes first:
    integer keys in a span a few times their count are counted with one bincount (a primary
    key side such as orders.o_orderkey: ~10 ms for 1.5M rows), others need a sort."""
    sides = []
    for counted, keys, other in ((left, lkeys, right), (right, rkeys, left)):
        packed = _valid_packed(counted, keys)
        if packed is not None:
            sides.append((not _countable(packed), len(packed), packed, other))
    for _, _, packed, other in sorted(sides, key=lambda s: s[:2]):
        if other.num_rows * _max_multiplicity(packed) <= limit_rows:
            return True
    return False


def _valid_packed(table: pa.Table, keys: list[str]) -> np.ndarray | None:
    """The packed integer keys of the rows without a NULL key (NULL keys never match)."""
    if any(table.column(k).null_count for k in keys):
        valid = functools.reduce(pc.and_, [pc.is_valid(table.column(k)) for k in keys])
        table = table.select(keys).filter(valid)
    if table.num_rows == 0:
        return np.zeros(0, dtype=np.int64)
    return _packed_int_key(table, keys)


def _countable(packed: np.ndarray) -> bool:
    return len(packed) > 0 and int(packed.max()) < 4 * len(packed) + (1 << 20)


def _max_multiplicity(packed: np.ndarray) -> int:
    """The largest number of rows sharing one packed key."""
    if len(packed) == 0:
        return 0
    if _countable(packed):
        return int(np.bincount(packed).max())
    values = np.sort(packed)
    change = np.flatnonzero(values[1:] != values[:-1])
    bounds = np.concatenate(([0], change + 1, [len(values)]))
    return int(np.diff(bounds).max())


def _matched_pairs(left: pa.Table, right: pa.Table, lkeys: list[str], rkeys: list[str]) -> int:
    small, big, skeys, bkeys = (left, right, lkeys, rkeys) if left.num_rows <= right.num_rows \
        else (right, left, rkeys, lkeys)
    if _unique(small, skeys):
        return big.num_rows  # unique keys on one side: each row of the other matches at most once
    small_counts = _key_counts(small, skeys)
    big_counts = _key_counts(big, bkeys)
    both = small_counts.join(big_counts, keys=[f"k{i}" for i in range(len(skeys))],
                             right_suffix="_r", use_threads=True)
    products = pc.multiply(both.column("n").cast(pa.int64()), both.column("n_r").cast(pa.int64()))
    return int(pc.sum(products).as_py() or 0)


def _unique(table: pa.Table, keys: list[str]) -> bool:
    """Are the key tuples distinct? Integer keys: one numpy sort of the keys packed into one
    int64 (several times faster than hashing); otherwise a hash aggregation."""
    packed = _packed_int_key(table, keys)
    if packed is not None:
        values = np.sort(packed)
        return not bool((values[1:] == values[:-1]).any())
    if len(keys) == 1:
        col = table.column(keys[0]).combine_chunks().drop_null()
        return len(pc.unique(col)) == len(col)
    return _key_counts(table, keys).num_rows == table.num_rows


def _packed_int_key(table: pa.Table, keys: list[str]) -> np.ndarray | None:
    """Integer keys without NULLs as one int64 per row (mixed radix), when their ranges fit."""
    packed, span = None, 1
    for k in keys:
        col = table.column(k)
        if not pa.types.is_integer(col.type) or col.null_count:
            return None
        values = col.combine_chunks().to_numpy().astype(np.int64, copy=False)
        low, high = int(values.min()), int(values.max())
        width = high - low + 1
        if span * width >= 1 << 62:
            return None
        packed = values - low if packed is None else packed * width + (values - low)
        span *= width
    return packed


def _key_counts(table: pa.Table, keys: list[str]) -> pa.Table:
    renamed = pa.table({f"k{i}": table.column(k) for i, k in enumerate(keys)})
    counts = renamed.group_by(renamed.column_names, use_threads=True).aggregate([([], "count_all")])
    return counts.rename_columns([*renamed.column_names, "n"])
