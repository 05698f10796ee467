"""Seed 002's rules on synthetic rowset metadata (storage/compaction_policy.py)."""

from __future__ import annotations

from storage.compaction_policy import (MB, CompactionConfig, RowsetInfo, base_score,
                                       calculate_cumulative_point, cumulative_score, level_of,
                                       levels, pick_base_inputs, pick_cumulative_inputs,
                                       promotion_size, tablet_view, update_cumulative_point)
from storage.rowset import RowsetMeta

CFG = CompactionConfig()
NOW = 1_000_000.0
OLD = NOW - 3600  # outside the 30 s skip window


def rs(start, end=None, size=MB, segments=1, delete=False, overlapping=False, created=OLD):
    return RowsetInfo(start, start if end is None else end, size, segments, delete, overlapping,
                      created)


def test_promotion_size_is_base_times_ratio_clamped_to_64mb_1gb():
    assert promotion_size([rs(0, 1, size=0)], CFG) == 64 * MB           # min
    assert promotion_size([rs(0, 9, size=4000 * MB)], CFG) == 200 * MB  # 4000 x 0.05
    assert promotion_size([rs(0, 9, size=100_000 * MB)], CFG) == 1024 * MB  # max
    ratio = CompactionConfig(promotion_ratio=0.5, promotion_min_size_mbytes=1)
    assert promotion_size([rs(0, 9, size=10 * MB)], ratio) == 5 * MB


def test_levels_halve_from_half_the_promotion_size_down_to_the_lower_size():
    assert levels(CFG) == [512 * MB, 256 * MB, 128 * MB, 64 * MB, 0]
    assert level_of(600 * MB, CFG) == 512 * MB
    assert level_of(256 * MB, CFG) == 256 * MB   # level[n-1] > size >= level[n]
    assert level_of(63 * MB, CFG) == 0


def test_cumulative_point_walk():
    promotion = 64 * MB
    # computed only while invalid (-1); afterwards compaction moves it
    assert calculate_cumulative_point([rs(0, 1, 0), rs(2)], 7, promotion) == 7
    # the base is exempt; a never-merged rowset stops the walk at its start
    assert calculate_cumulative_point([rs(0, 1, 0), rs(2), rs(3)], -1, promotion) == 2
    # merged and large enough: promoted; a small merged one stops the walk
    view = [rs(0, 5, 500 * MB), rs(6, 9, 100 * MB), rs(10, 12, 10 * MB), rs(13)]
    assert calculate_cumulative_point(view, -1, promotion) == 10
    # overlapping segments stop it even when large
    view = [rs(0, 5, 500 * MB), rs(6, 9, 100 * MB, overlapping=True)]
    assert calculate_cumulative_point(view, -1, promotion) == 6
    # a delete version is passed over; a version gap stops at the previous end + 1
    view = [rs(0, 5, 500 * MB), rs(6, delete=True, size=0, segments=0), rs(9, 9)]
    assert calculate_cumulative_point(view, -1, promotion) == 7
    # everything promoted: past the last rowset
    assert calculate_cumulative_point([rs(0, 5, 500 * MB), rs(6, 9, 100 * MB)], -1,
                                      promotion) == 10


def test_candidates_skip_young_unmerged_rowsets_and_stop_at_a_gap():
    cfg = CompactionConfig(min_deltas=2)
    view = [rs(0, 1, 0), *[rs(v) for v in range(2, 6)], rs(6, created=NOW - 5), rs(7), rs(8)]
    inputs, last_delete = pick_cumulative_inputs(view, 2, 64 * MB, cfg, NOW)
    assert [r.start for r in inputs] == [2, 3, 4, 5] and last_delete == -1
    # a young rowset that was already merged is a candidate
    merged_young = [rs(2), rs(3, 6, created=NOW - 5), rs(7)]
    inputs, _ = pick_cumulative_inputs([rs(0, 1, 0), *merged_young], 2, 64 * MB, cfg, NOW)
    assert [(r.start, r.end) for r in inputs] == [(2, 2), (3, 6), (7, 7)]


def test_delete_versions_bound_cumulative_inputs():
    cfg = CompactionConfig(min_deltas=2)
    d = rs(5, delete=True, size=0, segments=0)
    view = [rs(0, 1, 0), rs(2), rs(3), rs(4), d, rs(6), rs(7)]
    inputs, last_delete = pick_cumulative_inputs(view, 2, 64 * MB, cfg, NOW)
    assert [r.start for r in inputs] == [2, 3, 4] and last_delete == 5
    # a delete first is skipped, and remembered
    inputs, last_delete = pick_cumulative_inputs(view, 5, 64 * MB, cfg, NOW)
    assert [r.start for r in inputs] == [6, 7] and last_delete == 5
    # one non-overlapping rowset before a delete: nothing to merge
    d3 = rs(3, delete=True, size=0, segments=0)
    inputs, last_delete = pick_cumulative_inputs([rs(0, 1, 0), rs(2), d3], 2, 64 * MB, cfg, NOW)
    assert inputs == [] and last_delete == 3
    # ... unless its segments overlap
    one = [rs(0, 1, 0), rs(2, segments=3, overlapping=True), d3]
    assert len(pick_cumulative_inputs(one, 2, 64 * MB, cfg, NOW)[0]) == 1


def test_max_and_min_deltas():
    view = [rs(0, 1, 0), *[rs(v, segments=2) for v in range(2, 12)]]
    inputs, _ = pick_cumulative_inputs(view, 2, 64 * MB, CompactionConfig(max_deltas=6), NOW)
    assert [r.start for r in inputs] == [2, 3, 4]  # the score reached 6 segments
    few = [rs(0, 1, 0), rs(2), rs(3)]
    assert pick_cumulative_inputs(few, 2, 64 * MB, CFG, NOW)[0] == []  # 2 < min_deltas 5
    assert len(pick_cumulative_inputs(few, 2, 64 * MB, CompactionConfig(min_deltas=2),
                                      NOW)[0]) == 2


def test_level_trim_drops_leading_big_rowsets():
    cfg = CompactionConfig(min_deltas=2)
    view = [rs(0, 1, 0), rs(2, 9, 300 * MB), rs(10, size=MB), rs(11, size=MB), rs(12, size=MB)]
    inputs, _ = pick_cumulative_inputs(view, 2, 1024 * MB, cfg, NOW)
    assert [r.start for r in inputs] == [10, 11, 12]  # 256 MB level > level of 3 MB (0)
    # reaching the promotion size keeps everything
    inputs, _ = pick_cumulative_inputs(view, 2, 200 * MB, cfg, NOW)
    assert [r.start for r in inputs] == [2, 10, 11, 12]


def test_cumulative_point_after_compaction():
    assert update_cumulative_point(2, 9, MB, 10, 64 * MB) == 10       # delete boundary
    assert update_cumulative_point(2, 9, 100 * MB, -1, 64 * MB) == 10  # promoted
    assert update_cumulative_point(2, 9, MB, -1, 64 * MB) == 2         # stays


def test_scores():
    view = [rs(0, 5, 500 * MB, segments=4), rs(6, 9, 300 * MB, segments=2), rs(10, segments=3),
            rs(11, segments=2)]
    assert base_score(view, 10) == 6
    # below the promotion size the leading 300 MB rowset is trimmed by level
    assert cumulative_score(view, 6, 1024 * MB, CFG) == 5
    assert cumulative_score(view, 6, 64 * MB, CFG) == 7


def test_base_compaction_conditions():
    promoted = [rs(0, 5, 1000 * MB), rs(6, 7, 100 * MB), rs(8, 9, 100 * MB)]
    # (5) size ratio: 200 / 1000 = 0.2 <= 0.3, (4) 3 rowsets <= 5, (6) recent base: none
    assert pick_base_inputs(promoted, 10, CFG, NOW, NOW - 10)[0] == []
    # (6) a day since the last base compaction
    assert len(pick_base_inputs(promoted, 10, CFG, NOW, NOW - 86401)[0]) == 3
    # (5) ratio above 0.3
    heavy = [*promoted, rs(10, 12, 200 * MB)]
    assert pick_base_inputs(heavy, 13, CFG, NOW, NOW)[1] == "data ratio"
    # (4) more than base_compaction_num_cumulative_deltas rowsets
    many = [rs(0, 5, 1000 * MB), *[rs(v, v, MB) for v in range(6, 12)]]
    assert pick_base_inputs(many, 12, CFG, NOW, NOW)[1] == "rowset number"
    # (3) only [0-1] and one rowset; (1) a version gap; (2) overlapping segments
    assert pick_base_inputs([rs(0, 1, 0), rs(2, 9)], 10, CFG, NOW, 0)[0] == []
    assert pick_base_inputs([rs(0, 5), rs(7, 9)], 10, CFG, NOW, 0)[0] == []
    assert pick_base_inputs([rs(0, 5), rs(6, 9, overlapping=True)], 10, CFG, NOW, 0)[0] == []
    # delete versions are base inputs (and get purged)
    with_delete = [rs(0, 1, 0), rs(2, 4), rs(5, delete=True, size=0, segments=0)]
    assert len(pick_base_inputs(with_delete, 6, CFG, NOW, NOW)[0]) == 3


def test_tablet_view_fills_untouched_versions_and_adds_the_initial_base():
    def meta(rid, start, end):
        return RowsetMeta(rid, 1, rid, 1, 100, [f"{rid}_0.dat"], [1], start, end)
    view = tablet_view([meta(1, 2, 2), meta(2, 5, 5)])
    assert [(r.start, r.end) for r in view] == [(0, 1), (2, 2), (3, 5)]
    assert view[0].meta is None and view[2].meta.rowset_id == 2
    assert [(r.start, r.end) for r in tablet_view([meta(3, 0, 7), meta(4, 9, 9)])] == \
        [(0, 7), (8, 9)]
