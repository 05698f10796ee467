"""Spilling operators (Doris's `enable_spill`): hash aggregation, hash join and sort that write
part of their input to the query's spill space instead of holding it all (space.py)."""

from executor.spill.aggregate import spill_aggregate
from executor.spill.join import spill_join
from executor.spill.sort import merge_runs, spill_sort
from executor.spill.space import QuerySpill, SpillOptions

__all__ = ["QuerySpill", "SpillOptions", "spill_aggregate", "spill_join", "spill_sort",
           "merge_runs"]
