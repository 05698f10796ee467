"""SHOW CREATE TABLE: the table's DDL in Doris's canonical text.

    CREATE TABLE `t` (
      `k1` int NULL,
      `v` bigint SUM NULL DEFAULT "0" COMMENT 'c'
    ) ENGINE=OLAP
    AGGREGATE KEY(`k1`)
    COMMENT 'OLAP'
    PARTITION BY RANGE(`k1`)
    (PARTITION p1 VALUES [("-2147483648"), ("10")),
    PARTITION p2 VALUES [("10"), ("20")))
    DISTRIBUTED BY HASH(`k1`) BUCKETS 1
    PROPERTIES (
    "replication_allocation" = "tag.location.default: 1",
    ...
    );
"""

from __future__ import annotations

from catalog.index_rules import index_sql
from catalog.model import KEYS_SQL, UNIQUE_KEYS, OlapTable
from catalog.partitions import _max_text, _min_text, partition_types
from catalog.shown_properties import shown_properties


def _column_sql(c, keys_type: str) -> str:
    parts = [f"`{c.name}`", c.type.sql()]
    # A Unique table's REPLACE is implicit: Doris does not print it (Column.toSql).
    if c.aggregation and c.is_key is False and c.aggregation != "NONE" \
            and keys_type != UNIQUE_KEYS:
        parts.append(c.aggregation)
    parts.append("NULL" if c.nullable else "NOT NULL")
    if c.auto_increment:
        parts.append(f"AUTO_INCREMENT({c.auto_increment_start})")
    if c.default is not None:
        parts.append("DEFAULT CURRENT_TIMESTAMP" if c.default == "CURRENT_TIMESTAMP"
                     else f'DEFAULT "{c.default}"')
    if c.comment:
        parts.append(f"COMMENT '{c.comment}'")
    return " ".join(parts)


def _bound_sql(types, bound: list, lower: bool) -> str:
    vals = []
    for i, t in enumerate(types):
        if i >= len(bound):
            vals.append(_min_text(t))
        elif bound[i] is None:
            vals.append(_max_text(t))
        else:
            vals.append(bound[i])
    return "(" + ", ".join(f'"{v}"' for v in vals) + ")"


def _partition_sql(table: OlapTable) -> list[str]:
    info = table.partition_info
    if info.kind == "UNPARTITIONED":
        return []
    cols = ", ".join(f"`{c}`" for c in info.columns)
    types = partition_types(table)
    if info.auto and info.kind == "RANGE":  # Doris 2.1 prints the function
        lines = [f"AUTO PARTITION BY RANGE (date_trunc({cols}, '{info.auto_unit}'))"]
    elif info.auto:
        lines = [f"AUTO PARTITION BY LIST ({cols})"]
    else:
        lines = [f"PARTITION BY {info.kind}({cols})"]
    items = []
    for p in sorted(table.partitions.values(), key=lambda p: _sort_key(types, p)):
        if info.kind == "RANGE":
            items.append(f"PARTITION {p.name} VALUES [{_bound_sql(types, p.lower, True)}, "
                         f"{_bound_sql(types, p.upper, False)})")
        else:
            vals = ", ".join("(" + ", ".join(f'"{v}"' for v in tup) + ")" for tup in p.values or [])
            items.append(f"PARTITION {p.name} VALUES IN ({vals})")
    lines.append("(" + ",\n".join(items) + ")")
    return lines


def _sort_key(types, p):
    from catalog.partitions import _key
    return _key(types, p.lower) if p.lower is not None else (p.partition_id,)


def show_create_table_sql(table: OlapTable) -> str:
    """An async materialized view shows as Doris 2.1 shows it: CREATE MATERIALIZED VIEW ...
    ENGINE=MATERIALIZED_VIEW, its keys only when its CREATE named them."""
    mv = table.mtmv is not None
    out = [f"CREATE {'MATERIALIZED VIEW' if mv else 'TABLE'} `{table.name}` ("]
    out.append(",\n".join(["  " + _column_sql(c, table.keys_type) for c in table.columns]
                           + ["  " + index_sql(i) for i in table.table_indexes]))
    out.append(f") ENGINE={'MATERIALIZED_VIEW' if mv else 'OLAP'}")
    keys = ", ".join(f"`{c.name}`" for c in table.key_columns)
    if not mv or table.mtmv.get("keys"):
        out.append(f"{KEYS_SQL[table.keys_type]}({keys})")
    out.append(f"COMMENT '{table.comment or ('MATERIALIZED_VIEW' if mv else 'OLAP')}'")
    out.extend(_partition_sql(table))
    dist = table.distribution
    buckets = "AUTO" if dist.auto_buckets else str(dist.buckets)
    if dist.kind == "HASH":
        cols = ", ".join(f"`{c}`" for c in dist.columns)
        out.append(f"DISTRIBUTED BY HASH({cols}) BUCKETS {buckets}")
    else:
        out.append(f"DISTRIBUTED BY RANDOM BUCKETS {buckets}")
    props = shown_properties(table)
    out.append("PROPERTIES (")
    out.append(",\n".join(f'"{k}" = "{v}"' for k, v in props.items()))
    out.append(");")
    return "\n".join(out)
