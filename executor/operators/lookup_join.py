"""Lookup join: a hash join whose build side has unique integer keys.

The usual star-schema join (a fact table probing a dimension by its primary key) needs no hash
table: the build keys index a position array over [min, max] (Doris builds the same kind of
direct-mapped table for small integer key ranges), each probe key is one gather, and the output
is the probe rows (taken only when some do not match) beside the build rows taken at the found
positions. It keeps the probe side's row order and is several times faster than Acero's hash
join with its output materialisation.

Used for inner and left outer joins on integer keys (an inner join's residual condition is
applied to its output by the caller) when the build keys are unique (checked while the index is
built): several key columns are packed into one int64; a packed span of at most
`MAX_SPAN_FACTOR` times the build rows (or `MIN_SPAN`) gets a position table (a few bytes per
build row: even a 1.5M-row build, TPC-H orders, beats Acero's hash join built on a 320k-row
probe side 3x), a sparser one the sorted keys and a binary search (TPC-H Q9's lineitem x
partsupp on two keys). Left and right semi / anti joins on one integer key need only
membership, whatever the build keys.
NULL keys never match, on either side.
Otherwise `lookup_join` returns None and the caller uses the general hash join.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from storage.value_set import ValueSet

KINDS = ("inner", "left outer")
MAX_SPAN_FACTOR = 16
MIN_SPAN = 1 << 16


def lookup_join(left: pa.Table, right: pa.Table, node,
                needed: frozenset | None = None) -> pa.Table | None:
    """`left JOIN right` as the hash join would give it (columns: left's, then right's; only
    those in `needed` when given), or None when this join is not one a lookup table answers."""
    lks = [left.column(k) for k in node.left_keys]
    rks = [right.column(k) for k in node.right_keys]
    if not all(_signed_or_small(c.type) for c in lks + rks):
        return None
    if node.kind in _MEMBERSHIP:
        if node.residual is not None or len(lks) != 1:
            return None
        return _semi(left, right, lks[0], rks[0], node, needed)
    if node.kind not in KINDS or node.residual is not None and node.kind != "inner":
        return None  # (an inner join's residual filters the output afterwards)
    index = BuildIndex.of(rks)
    if index is None:
        return None
    found = index.probe(lks)  # build row per probe row, -1: no match
    if needed is not None:  # gather only the columns the output keeps (at least one)
        right = right.select([c for c in right.column_names if c in needed])
        left = left.select([c for c in left.column_names if c in needed]
                           or ([] if right.num_columns else left.column_names[:1]))
    if node.kind == "inner":
        matched = found >= 0
        probe = _rows(left, matched)
        build = right.take(pa.array(found[matched] if not matched.all() else found))
    else:  # left outer: unmatched probe rows get NULLs
        probe = left
        build = right.take(pa.array(found, mask=found < 0))
    return pa.Table.from_arrays(probe.columns + build.columns,
                                names=probe.column_names + build.column_names)


# semi / anti joins: (the output is the right side, keep the rows that match)
_MEMBERSHIP = {"left semi": (False, True), "left anti": (False, False),
               "right semi": (True, True), "right anti": (True, False)}


def _semi(left: pa.Table, right: pa.Table, lk: pa.ChunkedArray, rk: pa.ChunkedArray, node,
          needed: frozenset | None) -> pa.Table:
    """Semi / anti joins need no positions, only membership: the build keys (duplicates and
    any span allowed) become a value set (storage/value_set.py: a lookup table over a dense
    span, else a binary search), probed once per output-side row. A NULL key never matches,
    so it is kept by an anti join (NOT EXISTS), dropped by a semi join."""
    output_right, matching = _MEMBERSHIP[node.kind]
    out, probe_keys, build_keys = (right, rk, lk) if output_right else (left, lk, rk)
    if needed is not None:
        out = out.select([c for c in out.column_names if c in needed] or out.column_names[:1])
    build = build_keys.combine_chunks() if build_keys.num_chunks != 1 else build_keys.chunk(0)
    probe = probe_keys.combine_chunks() if probe_keys.num_chunks != 1 else probe_keys.chunk(0)
    if build.type != probe.type:  # (run_join gives both the same type; be safe anyway)
        build, probe = build.cast(pa.int64()), probe.cast(pa.int64())
    if len(build) - build.null_count == 0:
        hit = np.zeros(len(probe), dtype=bool)
    else:
        hit = ValueSet(build).contains_numpy(probe)
    return _rows(out, hit if matching else ~hit)


def _signed_or_small(t: pa.DataType) -> bool:
    return pa.types.is_integer(t) and t != pa.uint64()


class BuildIndex:
    """The build rows by key: the key columns packed into one int64 (each column's offset from
    its minimum, in mixed radix), then a position table over the packed span when it is dense,
    else the packed keys sorted (a binary search per probe row)."""

    def __init__(self, lows: list[int], widths: list[int], table: np.ndarray | None,
                 ordered: np.ndarray | None, order: np.ndarray | None):
        self.lows, self.widths = lows, widths
        self.table, self.ordered, self.order = table, ordered, order

    @staticmethod
    def of(keys: list[pa.ChunkedArray]) -> BuildIndex | None:
        """None when the keys are not unique, or too many bits to pack."""
        columns = [_contiguous(k) for k in keys]
        n = len(columns[0])
        if n == 0 or n >= 1 << 31:
            return None
        valid = _all_valid(columns)
        rows = np.arange(n, dtype=np.int32) if valid is None else \
            np.flatnonzero(valid).astype(np.int32)
        values = [c.to_numpy(zero_copy_only=False).astype(np.int64, copy=False) for c in
                  (columns if valid is None else [c.filter(pa.array(valid)) for c in columns])]
        if len(rows) == 0:
            return None
        lows = [int(v.min()) for v in values]
        widths = [int(v.max()) - lo + 1 for v, lo in zip(values, lows)]
        if float(np.prod([float(w) for w in widths])) >= 2.0 ** 62:
            return None
        packed = _pack(values, lows, widths)
        span = int(np.prod(widths, dtype=object))
        if span <= max(MAX_SPAN_FACTOR * len(rows), MIN_SPAN):
            table = np.full(span + 1, -1, dtype=np.int32)  # the last slot: "outside"
            table[packed] = rows
            if not np.array_equal(table[packed], rows):  # a duplicate overwrote a row
                return None
            return BuildIndex(lows, widths, table, None, None)
        order = np.argsort(packed, kind="stable")
        ordered = packed[order]
        if len(ordered) > 1 and bool((ordered[1:] == ordered[:-1]).any()):
            return None
        return BuildIndex(lows, widths, None, ordered, rows[order])

    def probe(self, keys: list[pa.ChunkedArray]) -> np.ndarray:
        """The build row of each probe row (int32), -1 where none matches (NULL keys, keys
        outside the build's range, absent keys)."""
        columns = [_contiguous(k) for k in keys]
        n = len(columns[0])
        inside = np.ones(n, dtype=bool)
        values = []
        for c, lo, width in zip(columns, self.lows, self.widths):
            v = (pc.fill_null(c, 0) if c.null_count else c).to_numpy().astype(np.int64,
                                                                              copy=False)
            offset = v - lo
            inside &= (offset >= 0) & (offset < width)
            values.append(np.where(inside, offset, 0))
        valid = _all_valid(columns)
        if valid is not None:
            inside &= valid
        packed = _pack(values, [0] * len(values), self.widths)
        if self.table is not None:
            found = self.table.take(np.where(inside, packed, len(self.table) - 1))
        else:
            pos = np.minimum(np.searchsorted(self.ordered, packed), len(self.ordered) - 1)
            found = np.where(self.ordered[pos] == packed, self.order[pos], -1)
        found[~inside] = -1
        return found


def _contiguous(keys: pa.ChunkedArray) -> pa.Array:
    return keys.combine_chunks() if keys.num_chunks != 1 else keys.chunk(0)


def _all_valid(columns: list[pa.Array]) -> np.ndarray | None:
    """Rows where no key is NULL (None: every row)."""
    valid = None
    for c in columns:
        if c.null_count:
            v = np.asarray(pc.is_valid(c))
            valid = v if valid is None else valid & v
    return valid


def _pack(values: list[np.ndarray], lows: list[int], widths: list[int]) -> np.ndarray:
    packed = values[0] - lows[0]
    for v, lo, width in zip(values[1:], lows[1:], widths[1:]):
        packed = packed * width + (v - lo)
    return packed


def _rows(table: pa.Table, keep: np.ndarray) -> pa.Table:
    if keep.all():
        return table
    return table.take(pa.array(np.flatnonzero(keep)))
