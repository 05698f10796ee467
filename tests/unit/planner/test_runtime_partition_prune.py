"""planner/prune_partitions.runtime_survivors: a runtime filter on a RANGE table's first
partition column keeps the partitions its [min, max] meets (Doris's runtime filter partition
pruning); executor/runtime_filter.apply_runtime_filters drops the other partitions' tablets."""

import datetime as dt

import pyarrow as pa

from executor.runtime_filter import apply_runtime_filters
from planner import logical as L
from planner.prune_partitions import runtime_survivors
from storage import ColumnPredicate as P
from storage.types import DataType

# p1 [MIN, 10), p2 [10, 20), p3 [20, 30), p4 [30, MAX)
BOUNDS = ((1, None, (10, False), True), (2, 10, (20, False), False),
          (3, 20, (30, False), False), (4, 30, None, False))


def _scan(bounds=BOUNDS) -> L.OlapScan:
    tablets = [L.ScanTablet(100 + 10 * pid + b, 1, pid, 0, b) for pid, *_ in bounds
               for b in range(2)]
    return L.OlapScan("db", "t", "t", ["k", "v"], ["t.k", "t.v"], tablets,
                      column_types={"k": DataType("INT"), "v": DataType("INT")},
                      num_buckets=2, range_column="k", range_bounds=bounds)


def test_an_in_filter_keeps_the_partitions_of_its_min_to_max():
    assert runtime_survivors(_scan(), [P("k", "in", array=pa.array([12, 25]))]) == {2, 3}
    assert runtime_survivors(_scan(), [P("k", "in", (10, 19))]) == {2}
    assert runtime_survivors(_scan(), [P("k", ">=", (-5,)), P("k", "<=", (9,))]) == {1}
    assert runtime_survivors(_scan(), [P("k", ">=", (31,)), P("k", "<=", (10**9,))]) == {4}


def test_nothing_pruned_is_none():
    assert runtime_survivors(_scan(), [P("k", "in", array=pa.array([1, 35]))]) is None
    assert runtime_survivors(_scan(), [P("v", "in", (12,))]) is None  # not the column
    assert runtime_survivors(_scan(()), [P("k", "in", (12,))]) is None  # not RANGE
    assert runtime_survivors(_scan(), [P("k", "in", (None,))]) is None


def test_date_bounds():
    bounds = ((7, dt.date(2024, 1, 1), (dt.date(2024, 2, 1), False), False),
              (8, dt.date(2024, 2, 1), (dt.date(2024, 3, 1), False), False))
    scan = _scan(bounds)
    days = pa.array([dt.date(2024, 2, 3), dt.date(2024, 2, 9)])
    assert runtime_survivors(scan, [P("k", "in", array=days)]) == {8}


def test_the_join_probe_scan_loses_the_pruned_partitions_tablets():
    scan = _scan()
    join = L.Join(scan, L.OneRow(), "inner", ["t.k"], ["d.k"])
    right = pa.table({"d.k": pa.array([21, 23, 29], pa.int32())})
    left = apply_runtime_filters(join, right)
    assert {t.partition_id for t in left.tablets} == {3}
    assert [b[0] for b in left.range_bounds] == [3]
    assert {t.partition_id for t in scan.tablets} == {1, 2, 3, 4}  # the plan is not changed
