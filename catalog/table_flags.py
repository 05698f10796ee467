"""ALTER TABLE t SET ("disable_auto_compaction" = "true" | "false"): table properties that are
switches, changed at once without a schema change (Doris 2.0.4+ ModifyTablePropertiesClause,
MODIFY_TABLE_PROPERTY_SYNC). The compaction scheduler reads the property every round
(catalog/compaction_scheduler.py), so a switch takes effect with the next one."""

from __future__ import annotations

from catalog.errors import AnalysisError

SWITCHES = frozenset({"disable_auto_compaction"})


def switches(properties: dict[str, str]) -> dict[str, str]:
    """The switches among `properties`, checked as Doris checks them: alone, true or false."""
    found = {k: v for k, v in properties.items() if k in SWITCHES}
    if not found:
        return {}
    if len(properties) != 1:
        raise AnalysisError("Can only set one table property at a time")
    key, value = next(iter(found.items()))
    if str(value).lower() not in ("true", "false"):
        raise AnalysisError(f"Property {key} should be set to true or false")
    return {key: str(value).lower()}
