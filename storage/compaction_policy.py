"""Seed 002's compaction policy as pure functions over rowset metadata.

A tablet's rowsets, in version order, are split by the *cumulative point* (cp): rowsets
starting before it belong to base compaction, the others to cumulative compaction. The
size_based cumulative policy (`cumulative_compaction_policy = size_based`):

    promotion_size(base)     base rowset size x cumulative_size_based_promotion_ratio, clamped
                             to [promotion_min_size_mbytes, promotion_size_mbytes]
    levels()                 promotion_size_mbytes / 2, halved while >= compaction_lower_size_
                             mbytes, then 0; a size's level is the largest level <= it
    calculate_cumulative_point  only while cp is -1 (the initial value; Doris computes it once
                             and then moves it with compaction, 3.5). From the base rowset:
                             a version gap -> previous end + 1; a data rowset never merged or
                             with overlapping segments -> its start; a data rowset (not the
                             base) smaller than promotion_size -> its start; else past it
    pick_cumulative_inputs   candidates: start >= cp and (older than
                             cumulative_compaction_skip_window_seconds or already merged or
                             a small load's slice: minidoris's own rule, slices merge many
                             tablets at a time (storage/slice_compaction.py), and held back
                             30 s a busy table's every tablet keeps hundreds of them); the
                             first gap-free run; walk it: a delete version stops the walk once
                             inputs exist (else it is skipped), remembered as last_delete_version;
                             the score (segments) reaching max_cumulative_compaction_num_
                             singleton_deltas stops it; then (3.3.3) keep if size >= promotion;
                             with a delete boundary keep unless one non-overlapping rowset; else
                             drop leading rowsets whose level exceeds the rest's level; finally
                             fewer than cumulative_compaction_min_deltas segments (and below the
                             promotion size, no delete boundary) or one non-overlapping rowset
                             is not worth a compaction
    (no inputs but a delete version met: the caller moves cp past it, as Doris's
                             CumulativeCompaction does, or the delete would block cp forever)
    update_cumulative_point  after a cumulative compaction: a delete boundary -> output end + 1;
                             output >= promotion_size -> output end + 1; else unchanged
    cumulative_score         segments after cp; below promotion_size, minus the leading
                             rowsets whose level exceeds the rest's (3.6)
    pick_base_inputs         every rowset before cp, if gap-free, none overlapping, not just
                             [0-1] + one rowset, and: more than base_compaction_num_cumulative_
                             deltas rowsets, or the others / base size > base_cumulative_delta_
                             ratio, or the last base compaction older than base_compaction_
                             interval_seconds_since_last_operation
    base_score               segments before cp

`RowsetInfo` is the metadata the rules read; `tablet_view` makes it from a tablet's published
rowsets. minidoris's tablets skip the versions of loads that did not touch them (Doris writes
an empty rowset to every tablet of the partition): the view widens each rowset's start down to
the previous end + 1 and puts Doris's initial empty [0-1] base rowset first, so those versions
are not "missing". `CompactionState` is the per-tablet state the BE keeps (cp, last success
and failure times) shown by /api/compaction/show.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from storage.rowset import RowsetMeta

MB = 1024 * 1024
INVALID_CUMULATIVE_POINT = -1


@dataclass(frozen=True)
class CompactionConfig:
    """BE configs of seed 002 (names in conf/minidoris.conf)."""
    promotion_ratio: float = 0.05          # cumulative_size_based_promotion_ratio
    promotion_size_mbytes: int = 1024      # cumulative_size_based_promotion_size_mbytes
    promotion_min_size_mbytes: int = 64    # cumulative_size_based_promotion_min_size_mbytes
    lower_size_mbytes: int = 64            # cumulative_size_based_compaction_lower_size_mbytes
    max_deltas: int = 1000                 # max_cumulative_compaction_num_singleton_deltas
    min_deltas: int = 5                    # cumulative_compaction_min_deltas
    skip_window_seconds: float = 30        # cumulative_compaction_skip_window_seconds
    base_min_rowset_num: int = 5           # base_compaction_num_cumulative_deltas
    base_min_data_ratio: float = 0.3       # base_cumulative_delta_ratio
    base_interval_seconds: float = 86400   # base_compaction_interval_seconds_since_last_operation


@dataclass(frozen=True)
class RowsetInfo:
    start: int
    end: int
    size: int = 0
    segments: int = 1
    is_delete: bool = False
    overlapping: bool = False
    created: float = 0.0
    meta: RowsetMeta | None = None  # None: the virtual empty base rowset [0-1]

    @property
    def score(self) -> int:
        return self.segments

    @property
    def merged(self) -> bool:
        return self.start != self.end


@dataclass
class CompactionState:
    cumulative_point: int = INVALID_CUMULATIVE_POINT
    last_cumu_success: float = 0.0
    last_base_success: float = 0.0
    last_cumu_failure: float = 0.0
    last_base_failure: float = 0.0
    running: str = ""  # "base" | "cumulative" while a compaction runs
    opened: float = field(default_factory=time.time)  # the base interval counts from here

    @property
    def base_interval_start(self) -> float:
        return max(self.last_base_success, self.opened)


def tablet_view(rowsets: list[RowsetMeta]) -> list[RowsetInfo]:
    """The policy's view of published rowsets (version order): see the module docstring."""
    view: list[RowsetInfo] = []
    if not rowsets or rowsets[0].start_version > 1:
        view.append(RowsetInfo(0, 1, 0, 0))
    for r in rowsets:
        view.append(_info(view, r))
    return view


def extend_view(view: list[RowsetInfo], r: RowsetMeta) -> list[RowsetInfo]:
    """`tablet_view(rowsets + [r])` from `view` = `tablet_view(rowsets)` (a new list)."""
    return [*view, _info(view, r)]


def _info(view: list[RowsetInfo], r: RowsetMeta) -> RowsetInfo:
    start = view[-1].end + 1 if view else r.start_version
    if start < r.start_version:  # a version gap before r: r covers it (see the docstring)
        return RowsetInfo(start, r.end_version, r.data_size, r.num_segments, r.is_delete,
                          False, r.creation_time, r)
    # The common case depends on r alone: kept with the published meta (never changed once
    # published), so a view is rebuilt after a compaction without a new object per rowset.
    info = r.__dict__.get("_policy_info")
    if info is None:
        info = RowsetInfo(r.start_version, r.end_version, r.data_size, r.num_segments,
                          r.is_delete, False, r.creation_time, r)
        r.__dict__["_policy_info"] = info
    return info


def promotion_size(view: list[RowsetInfo], cfg: CompactionConfig) -> int:
    base = view[0].size if view and view[0].start == 0 else 0
    size = int(base * cfg.promotion_ratio)
    return max(cfg.promotion_min_size_mbytes * MB, min(size, cfg.promotion_size_mbytes * MB))


def levels(cfg: CompactionConfig) -> list[int]:
    out, level = [], cfg.promotion_size_mbytes * MB // 2
    while level >= cfg.lower_size_mbytes * MB and level > 0:
        out.append(level)
        level //= 2
    return out + [0]


def level_of(size: int, cfg: CompactionConfig) -> int:
    return next(level for level in levels(cfg) if size >= level)


def calculate_cumulative_point(view: list[RowsetInfo], current: int, promotion: int) -> int:
    if current != INVALID_CUMULATIVE_POINT:
        return current
    point, prev_end = INVALID_CUMULATIVE_POINT, -1
    for rs in view:
        if rs.start > prev_end + 1:
            return prev_end + 1
        if not rs.is_delete and rs.start != 0 and (not rs.merged or rs.overlapping):
            return rs.start
        if not rs.is_delete and rs.start != 0 and rs.size < promotion:
            return rs.start
        prev_end = rs.end
        point = prev_end + 1
    return point


def _trim_by_level(rowsets: list[RowsetInfo], cfg: CompactionConfig) -> list[RowsetInfo]:
    """Drop leading rowsets whose size level exceeds the level of the rest's total (3.3.3c)."""
    total = sum(r.size for r in rowsets)
    while rowsets:
        current = rowsets[0].size
        if level_of(current, cfg) > level_of(total - current, cfg):
            rowsets = rowsets[1:]
            total -= current
        else:
            break
    return rowsets


def _first_run(rowsets: list[RowsetInfo]) -> list[RowsetInfo]:
    """The rowsets before the first version gap."""
    for i in range(1, len(rowsets)):
        if rowsets[i].start != rowsets[i - 1].end + 1:
            return rowsets[:i]
    return rowsets


def pick_cumulative_inputs(view: list[RowsetInfo], point: int, promotion: int,
                           cfg: CompactionConfig, now: float) -> tuple[list[RowsetInfo], int]:
    """(input rowsets, last_delete_version or -1); no inputs: nothing worth compacting."""
    candidates = _first_run([r for r in view if r.start >= point and
                             (now - r.created >= cfg.skip_window_seconds or r.merged or
                              (r.meta is not None and r.meta.load_file is not None))])
    inputs: list[RowsetInfo] = []
    last_delete, score = -1, 0
    for rs in candidates:
        if rs.is_delete:
            last_delete = rs.end
            if inputs:
                break
            continue
        inputs.append(rs)
        score += rs.score
        if score >= cfg.max_deltas:
            break
    total = sum(r.size for r in inputs)
    if total >= promotion:
        return inputs, last_delete
    if last_delete != -1:
        if len(inputs) == 1 and not inputs[0].overlapping:
            return [], last_delete
    else:
        inputs = _trim_by_level(inputs, cfg)
        if sum(r.score for r in inputs) < cfg.min_deltas:
            return [], last_delete
    if len(inputs) == 1 and not inputs[0].overlapping:
        return [], last_delete
    return inputs, last_delete


def update_cumulative_point(point: int, output_end: int, output_size: int, last_delete: int,
                            promotion: int) -> int:
    if last_delete != -1 or output_size >= promotion:
        return output_end + 1
    return point


def cumulative_score(view: list[RowsetInfo], point: int, promotion: int,
                     cfg: CompactionConfig) -> int:
    after = [r for r in view if r.start >= point]
    if sum(r.size for r in after) < promotion:
        after = _trim_by_level(after, cfg)
    return sum(r.score for r in after)


def pick_base_inputs(view: list[RowsetInfo], point: int, cfg: CompactionConfig, now: float,
                     last_success: float) -> tuple[list[RowsetInfo], str]:
    """(input rowsets, why) — no inputs when the conditions of 4.2 do not hold."""
    inputs = [r for r in view if r.start < point]
    if len(inputs) < 2:
        return [], "no rowsets to merge before the cumulative point"
    if _first_run(inputs) != inputs:
        return [], "versions are missing before the cumulative point"
    if any(r.overlapping and not r.is_delete for r in inputs):
        return [], "a rowset has overlapping segments"
    if len(inputs) == 2 and inputs[0].start == 0 and inputs[0].end == 1:
        return [], "only the initial base rowset and one rowset"
    if len(inputs) > cfg.base_min_rowset_num:
        return inputs, "rowset number"
    base = inputs[0].size
    others = sum(r.size for r in inputs[1:])
    ratio = others / base if base else (float("inf") if others else 0.0)
    if ratio > cfg.base_min_data_ratio:
        return inputs, "data ratio"
    if now - last_success > cfg.base_interval_seconds:
        return inputs, "interval since the last base compaction"
    return [], "no base compaction condition holds"


def base_score(view: list[RowsetInfo], point: int) -> int:
    return sum(r.score for r in view if r.start < point)
