"""Doris column types as Spark SQL types, and the Arrow types Spark exchanges for them.

Spark's Arrow exchange wants exactly the declared types: a DATETIME (Arrow timestamp without a
zone) is Spark's TIMESTAMP_NTZ, LARGEINT (Arrow decimal128(38, 0)) DECIMAL(38,0).
"""

from __future__ import annotations

from storage.types import DataType

_SPARK = {
    "BOOLEAN": "BOOLEAN", "TINYINT": "TINYINT", "SMALLINT": "SMALLINT", "INT": "INT",
    "BIGINT": "BIGINT", "LARGEINT": "DECIMAL(38,0)", "FLOAT": "FLOAT", "DOUBLE": "DOUBLE",
    "DATE": "DATE", "DATETIME": "TIMESTAMP_NTZ", "CHAR": "STRING", "VARCHAR": "STRING",
    "STRING": "STRING",
}


def spark_type(t: DataType) -> str:
    if t.kind == "DECIMAL":
        return f"DECIMAL({t.precision},{t.scale})"
    return _SPARK[t.kind]


def spark_ddl(columns: list[tuple[str, DataType]]) -> str:
    """`a INT, b STRING, ...` for a DataFrame schema (names quoted with backticks)."""
    return ", ".join(f"`{name}` {spark_type(t)}" for name, t in columns)
