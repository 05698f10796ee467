"""OlapScan: read the scan's tablets at their snapshot versions, in parallel, as one table.

Each scan unit is read by a pool thread (pyarrow and the segment decoder release the GIL);
storage applies the pushed-down predicates (pruning with its indexes) and merges rows by the
table's model. Columns come back renamed to the scan's internal names.

Scan units (`scan_units`): a scan over many small tablets (at least UNIT_MIN_TABLETS), or any
scan whose predicates no page-level index serves (`scan_unit.page_indexes_serve`: then also
tablets of large segments, and a unit of one tablet), groups
consecutive tablets whose snapshots read without merging (`storage/scan_unit.py`) into units
of about UNIT_ROWS rows, at least two per pool worker when there are enough tablets; each
unit is one pool task and one storage read (Doris's scanner scheduler likewise hands a
scanner several tablets). Tablets whose rows are each one slice of a load file form units of
their own kind (`storage/slice_unit.py`: gathered from the files and filtered at once). Every
other tablet is a unit of its own. Order is kept: the units
list the tablets in scan order.

Tablets read one by one with page-level indexes (`_indexed`: a bloom filter, the short key,
...; units of one tablet each, not grouped ones, which read whole columns) are mostly
Python work per segment and page (a bloom-filtered tablet: ~0.2 ms), which two threads cannot
share: the GIL hand-offs cost more CPU than they save (8 such tablets: 1.6 ms read in turn,
4.3 ms of CPU and 3.2 ms of wall time in the pool). Those are read in the statement's own
thread while they stay within INLINE_BUDGET_S, or, past it, while they decode at most
INLINE_ROWS_PER_SEGMENT rows per segment on average (then the work is per-segment Python either
way: after 40 small loads a bloom-filtered equality over 8 tablets took 6.0 ms through the wire
with its later tablets in the pool, 4.2 ms in the statement's thread; a scan decoding more per
segment, such as SSB Q1.2's month of a year partition, is numpy work the pool shares); the
rest go to the pool (`inline_reads`). Units read as whole columns (numpy/Arrow kernels, GIL released) always
go to the pool.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pyarrow as pa

import numpy as np

from executor.env import ExecEnv
from storage import ScanStats
from storage import scan_unit, slice_unit
from storage.inverted import filter as inverted_filter

UNIT_MIN_TABLETS = 16  # fewer tablets are read one by one, each with its page-level indexes
UNIT_ROWS = 262_144
INLINE_BUDGET_S = 0.003  # indexed units read in the statement's thread for this long at least
INLINE_ROWS_PER_SEGMENT = 2048  # ... and beyond it while they decode this few rows per segment
_NO_STATS = ScanStats()  # the counters of a unit's later tablets (its first carries them all)


def scan_schema(node) -> pa.Schema:
    return pa.schema([pa.field(o, node.column_types[c].arrow())
                      for c, o in zip(node.columns, node.output)])


def read_tablet(node, st, env: ExecEnv, schema: pa.Schema) -> tuple[pa.Table, ScanStats]:
    """One tablet's rows at its snapshot version, renamed to the scan's internal names, with
    the tablet's scan counters (merged by the caller's thread: no shared counters here)."""
    stats = ScanStats()
    with inverted_filter.using(node.match_filters):  # MATCHes the inverted indexes answer
        if st.snapshot is not None:  # captured at bind time (storage/snapshot.py)
            table = st.snapshot.read(list(node.columns), list(node.predicates), stats,
                                     merge=not node.preaggregate)
        else:
            table = env.engine.get_tablet(st.tablet_id).read(st.version, list(node.columns),
                                                             list(node.predicates), stats,
                                                             merge=not node.preaggregate)
    table = table.rename_columns(node.output)
    return (table if table.schema.equals(schema) else table.cast(schema)), stats


def scan_units(node, env: ExecEnv) -> list[list]:
    """The scan's tablets (ScanTablet) grouped into units, in scan order (module docstring)."""
    tablets = node.tablets
    env.progress.planned(len(tablets))
    # the kind of unit a tablet can join: "segments" (storage/scan_unit.py), "slices"
    # (storage/slice_unit.py), or None (a unit of its own)
    kinds = [_unit_kind(st, node) for st in tablets]
    if sum(k is not None for k in kinds) < UNIT_MIN_TABLETS and _indexed(node):
        return [[st] for st in tablets]
    sizes = [scan_unit.snapshot_rows(st.snapshot) if k else 0 for st, k in zip(tablets, kinds)]
    total = sum(sizes)
    workers = getattr(env.pool, "_max_workers", 2)
    target = max(1, min(UNIT_ROWS, total // (2 * workers)))
    units: list[list] = []
    current: list = []
    rows, kind = 0, None
    for st, k, size in zip(tablets, kinds, sizes):
        if current and (k is None or k != kind):
            units.append(current)
            current, rows = [], 0
        if k is None:
            units.append([st])
            continue
        current.append(st)
        kind = k
        rows += size
        if rows >= target:
            units.append(current)
            current, rows = [], 0
    if current:
        units.append(current)
    return units


def _unit_kind(st, node) -> str | None:
    snap = st.snapshot
    if snap is None:
        return None
    kind = snap.memo("unit_kind", _kind_of)
    if kind == "large segments":  # read whole unless a page-level index serves the scan
        return None if _indexed(node) else "segments"
    return kind


def _kind_of(snap) -> str | None:
    if scan_unit.eligible(snap):
        return "segments"
    if scan_unit.eligible(snap, any_size=True):
        return "large segments"
    if slice_unit.eligible(snap):
        return "slices"
    return None


def _indexed(node) -> bool:
    """A page-level index may skip rows of this scan (storage/scan_unit.page_indexes_serve):
    its tablets are read one by one, with their page-level indexes."""
    found = node.__dict__.get("_page_indexes")  # worked out once per scan node
    if found is None:
        snaps = [st.snapshot for st in node.tablets
                 if st.snapshot is not None and scan_unit.snapshot_rows(st.snapshot)]
        found = not snaps or scan_unit.page_indexes_serve(snaps, node.predicates,
                                                          bool(node.match_filters))
        node.__dict__["_page_indexes"] = found
    return found


def read_unit(node, unit: list, env: ExecEnv,
              schema: pa.Schema) -> tuple[pa.Table, ScanStats, np.ndarray]:
    """A unit's rows (renamed to the scan's internal names), its scan counters and the number
    of rows each of its tablets gave."""
    kind = _unit_kind(unit[0], node)
    if len(unit) > 1 or (kind == "segments" and not _indexed(node)):
        stats = ScanStats()
        reader = scan_unit.read_unit if kind == "segments" else slice_unit.read_slices
        found = reader([st.snapshot for st in unit], list(node.columns), list(node.predicates),
                       stats)
        if found is not None:
            table, rows = found
            table = table.rename_columns(node.output)
            env.progress.read(len(unit), stats.rows_read)
            return (table if table.schema.equals(schema) else table.cast(schema)), stats, rows
    parts = [read_tablet(node, st, env, schema) for st in unit]
    stats = ScanStats()
    for _, s in parts:
        stats.merge(s)
    tables = [t for t, _ in parts]
    table = tables[0] if len(tables) == 1 else pa.concat_tables(tables)
    env.progress.read(len(unit), stats.rows_read)
    return table, stats, np.array([t.num_rows for t in tables], dtype=np.int64)


def read_tablets(node, env: ExecEnv, schema: pa.Schema) -> list[tuple[pa.Table, ScanStats]]:
    """Every tablet's rows and counters, in scan order, read unit by unit in the pool (a unit's
    counters go with its first tablet)."""
    units = scan_units(node, env)
    done = _read_units(node, units, env, lambda u: read_unit(node, u, env, schema))
    out = []
    for (table, stats, rows), unit in zip(done, units):
        if len(unit) == 1:
            out.append((table, stats))
            continue
        starts = np.concatenate(([0], np.cumsum(rows)))
        for i in range(len(unit)):
            out.append((table.slice(int(starts[i]), int(rows[i])), stats if i == 0 else _NO_STATS))
    return out


def _read_units(node, units: list, env: ExecEnv, read) -> list:
    """`read` of every unit, in order: in the pool, but an indexed scan's leading units in this
    thread (`inline_reads`)."""
    if len(units) <= 1:
        return [read(u) for u in units]
    done = list(inline_reads(node, units, read))
    return done + list(env.pool.map(read, units[len(done):]))


def inline_reads(node, units: list, read) -> Iterator:
    """`read` of the leading units in the statement's thread, in order, while their reads have
    taken at most INLINE_BUDGET_S or decoded at most INLINE_ROWS_PER_SEGMENT rows per segment,
    when they are tablets read one by one with page-level indexes (module docstring);
    none for grouped units and unindexed scans, which read whole columns. `read` returns a
    tuple whose second item is the unit's ScanStats. The caller reads the units after them in
    the pool."""
    if not _indexed(node) or any(len(u) != 1 for u in units):
        return
    spent, segments, read_rows = 0.0, 0, 0
    for unit in units:
        start = time.perf_counter()
        result = read(unit)
        spent += time.perf_counter() - start
        segments += result[1].segments_total
        read_rows += result[1].rows_read
        yield result
        if spent > INLINE_BUDGET_S and read_rows > INLINE_ROWS_PER_SEGMENT * segments:
            return


def run_scan(node, env: ExecEnv) -> pa.Table:
    schema = scan_schema(node)
    units = scan_units(node, env)
    parts = _read_units(node, units, env, lambda u: read_unit(node, u, env, schema)[:2])
    for _, stats in parts:
        env.scan_stats.merge(stats)
    tables = [t for t, _ in parts if t.num_rows]
    if not tables:
        return schema.empty_table()
    return pa.concat_tables(tables)
