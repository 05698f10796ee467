"""A table's PROPERTIES as Doris shows them (SHOW CREATE TABLE, information_schema.
table_properties): `replication_num` as `replication_allocation`, then the properties given at
CREATE / ALTER (an async materialized view's too), then the defaults Doris always prints."""

from __future__ import annotations

from catalog.model import OlapTable

# printed even when never set, as Doris's TableProperty holds them
_ALWAYS = (("storage_format", "V2"), ("light_schema_change", "true"),
           ("disable_auto_compaction", "false"))


def shown_properties(table: OlapTable) -> dict[str, str]:
    props = {"replication_allocation":
             f"tag.location.default: {table.properties.get('replication_num', '3')}"}
    props.update({k: v for k, v in table.properties.items() if k != "replication_num"})
    if table.mtmv:  # an async materialized view's own properties (grace_period, ...)
        props.update(table.mtmv.get("properties", {}))
    for key, default in _ALWAYS:
        props.setdefault(key, default)
    return props
