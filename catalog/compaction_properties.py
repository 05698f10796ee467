"""A table's compaction properties as Doris checks them (PropertyAnalyzer at CREATE TABLE,
ModifyTablePropertiesClause at ALTER TABLE SET): `compaction_policy` (time_series |
size_based) and the time_series_compaction_* thresholds. They are stored in the table's
properties and shown by SHOW CREATE TABLE; minidoris's compaction (catalog/compaction.py) does
not change its policy by them.

    check_compaction(key, value)   one property's value (ALTER TABLE SET's texts)
    check_create(properties)       CREATE TABLE: each value, and time-series thresholds only
                                   with compaction_policy time_series
"""

from __future__ import annotations

from catalog.errors import AnalysisError

COMPACTION_POLICIES = ("time_series", "size_based")
# time_series_compaction_* minimums (ModifyTablePropertiesClause.analyze)
_TIME_SERIES_MIN = {"time_series_compaction_goal_size_mbytes": 10,
                    "time_series_compaction_file_count_threshold": 10,
                    "time_series_compaction_time_threshold_seconds": 60,
                    "time_series_compaction_empty_rowsets_threshold": 2,
                    "time_series_compaction_level_threshold": 1}
COMPACTION_KEYS = ("compaction_policy", *_TIME_SERIES_MIN)


def check_compaction(key: str, value: str) -> str:
    """A compaction property's value as Doris checks it in ALTER TABLE SET."""
    if key == "compaction_policy":
        if value not in COMPACTION_POLICIES:
            raise AnalysisError("Table compaction policy only support for time_series or "
                                "size_based")
        return value
    try:
        number = int(value)
    except ValueError:
        raise AnalysisError(f"Invalid {key} format: {value}") from None
    low = _TIME_SERIES_MIN[key]
    if key == "time_series_compaction_level_threshold":
        if not 1 <= number <= 2:
            raise AnalysisError(f"{key} can not be less than 1 or greater than 2:{value}")
    elif number < low:
        raise AnalysisError(f"{key} can not be less than {low}:{value}")
    return value



def check_create(properties: dict[str, str]) -> None:
    policy = properties.get("compaction_policy")
    if policy is not None and policy not in COMPACTION_POLICIES:
        raise AnalysisError("compaction_policy must be time_series or size_based")
    for key in _TIME_SERIES_MIN:
        if key in properties:
            if policy != "time_series":
                raise AnalysisError("only time series compaction policy support for time "
                                    "series config")
            check_compaction(key, properties[key])
