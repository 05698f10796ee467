"""Values as the MySQL text protocol shows them, per Doris type, vectorised with pyarrow.

BOOLEAN is 1/0; DATETIME is `YYYY-MM-DD HH:MM:SS` with as many fractional digits as its scale;
DECIMAL keeps its scale; DOUBLE uses the shortest round-trip text; an ARRAY is `[1, null, 3]` /
`["a", "b"]`, a MAP `{"a":1, "b":null}`, a STRUCT `{"f1":1, "f2":"x"}`
(executor/expressions/nested_text.py, scalars inside written by this module), sent as
MYSQL_TYPE_STRING as Doris's PrimitiveType.toMysqlType does for them; a JSON value is its
normalized text (`{"k1":"v31","k2":300}`), sent as MYSQL_TYPE_JSON (245) as Doris does. The column metadata
(`column_definition`) reports the matching MySQL type, length, decimals and flags.
"""

from __future__ import annotations

from functools import lru_cache

import pyarrow as pa
import pyarrow.compute as pc
from mysql_mimic.charset import CharacterSet
from mysql_mimic.packets import make_column_definition_41
from mysql_mimic.types import ColumnDefinition, ColumnType, str_len

from executor.expressions.nested_text import format_nested
from executor.expressions.decimal_text import decimal_text
from storage.types import DataType, from_arrow, is_json_type, json_storage

_MYSQL_TYPE = {
    "BOOLEAN": ColumnType.TINY, "TINYINT": ColumnType.TINY, "SMALLINT": ColumnType.SHORT,
    "INT": ColumnType.LONG, "BIGINT": ColumnType.LONGLONG, "LARGEINT": ColumnType.STRING,
    "FLOAT": ColumnType.FLOAT, "DOUBLE": ColumnType.DOUBLE, "DECIMAL": ColumnType.NEWDECIMAL,
    "DATE": ColumnType.DATE, "DATETIME": ColumnType.DATETIME, "CHAR": ColumnType.STRING,
    "VARCHAR": ColumnType.VAR_STRING, "STRING": ColumnType.VAR_STRING,
    "ARRAY": ColumnType.STRING, "MAP": ColumnType.STRING, "STRUCT": ColumnType.STRING,
    "JSON": ColumnType.JSON,  # PrimitiveType.toMysqlType: JSONB; the complex types STRING
    "VARIANT": ColumnType.STRING,
}
_LENGTH = {"BOOLEAN": 1, "TINYINT": 4, "SMALLINT": 6, "INT": 11, "BIGINT": 20, "LARGEINT": 40,
           "FLOAT": 12, "DOUBLE": 22, "DATE": 10}


def to_text(array: pa.Array | pa.ChunkedArray, dtype: DataType) -> pa.Array:
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    t = array.type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return array
    if is_json_type(t):  # its normalized text (executor/expressions/json_text.py)
        return json_storage(array)
    if pa.types.is_nested(t):  # ARRAY / MAP / STRUCT (executor/expressions/nested_text.py)
        return format_nested(array, dtype if dtype.is_nested else from_arrow(t), to_text)
    if pa.types.is_boolean(t):
        return pc.cast(pc.cast(array, pa.int8()), pa.string())
    if pa.types.is_timestamp(t):
        scale = dtype.scale if dtype.kind == "DATETIME" else 0
        if scale == 0:
            return pc.strftime(pc.cast(array, pa.timestamp("s"), safe=False), "%Y-%m-%d %H:%M:%S")
        text = pc.strftime(array, "%Y-%m-%d %H:%M:%S")  # microseconds: 6 digits
        return pc.utf8_slice_codeunits(text, 0, 20 + scale)
    if pa.types.is_null(t):
        return pa.nulls(len(array), pa.string())
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):  # raw bytes, as Doris sends them
        text = pa.large_string() if pa.types.is_large_binary(t) else pa.string()
        if isinstance(array, pa.ChunkedArray):
            return pa.chunked_array([c.view(text) for c in array.chunks], text)
        return array.view(text)
    if pa.types.is_decimal(t):  # positional, never 0E-10 (executor/expressions/decimal_text.py)
        return decimal_text(array)
    return pc.cast(array, pa.string())


def few_texts(array: pa.Array | pa.ChunkedArray, dtype: DataType) -> list:
    """`to_text(array, dtype).to_pylist()` for a few rows: strings and integers (whose text
    is Python's own) without a kernel call; other types through to_text."""
    kind = _FEW_KINDS.get(array.type)
    if kind == "str" or kind == "bytes":  # bytes go to the wire as they are
        return array.to_pylist()
    if kind == "int":
        return [None if v is None else str(v) for v in array.to_pylist()]
    return to_text(array, dtype).to_pylist()


_FEW_KINDS = {**{t: "str" for t in (pa.string(), pa.large_string())},
              **{t: "bytes" for t in (pa.binary(), pa.large_binary())},
              **{t: "int" for t in (pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(),
                                    pa.uint16(), pa.uint32(), pa.uint64())}}


def mysql_type(dtype: DataType) -> int:
    return _MYSQL_TYPE.get(dtype.kind, ColumnType.VAR_STRING)


def column_definition(name: str, dtype: DataType, nullable: bool = True, *, schema: str = "",
                      table: str = "", field_list: bool = False,
                      default: str | None = None) -> bytes:
    """One column definition packet; `field_list` adds COM_FIELD_LIST's default value (a
    length-encoded string, NULL as 0xfb). Packets are kept (every result sends its columns'
    definitions; a point query's are a tenth of its time)."""
    return _column_definition(name, dtype, nullable, schema, table, field_list, default)


@lru_cache(maxsize=4096)
def _column_definition(name: str, dtype: DataType, nullable: bool, schema: str, table: str,
                       field_list: bool, default: str | None) -> bytes:
    kind = dtype.kind
    mtype = _MYSQL_TYPE.get(kind, ColumnType.VAR_STRING)
    flags = ColumnDefinition(0)
    if not nullable:
        flags |= ColumnDefinition.NOT_NULL_FLAG
    decimals = 0
    charset = CharacterSet.utf8mb4
    if dtype.is_numeric or dtype.kind in ("BOOLEAN", "DATE", "DATETIME"):
        # LARGEINT goes as text in utf8 (Doris's Type.getMysqlResultSetFieldCharsetIndex:
        # MySQL has no such integer): with the binary charset drivers returned bytes
        if kind != "LARGEINT":
            charset = CharacterSet.binary
            flags |= ColumnDefinition.BINARY_FLAG
        if dtype.is_numeric:
            flags |= ColumnDefinition.NUM_FLAG
    if kind == "DECIMAL":
        decimals = dtype.scale
        length = dtype.precision + (1 if dtype.scale else 0) + 1
    elif kind == "DATETIME":
        decimals = dtype.scale
        length = 19 + (dtype.scale + 1 if dtype.scale else 0)
    elif kind in ("FLOAT", "DOUBLE"):
        decimals = 31
        length = _LENGTH[kind]
    elif dtype.is_string:
        length = min(dtype.length or 65533, 65533) * 4 if kind != "STRING" else 2147483647
    else:
        length = _LENGTH.get(kind, 255)
    return make_column_definition_41(
        server_charset=CharacterSet.utf8mb4, schema=schema, table=table, name=name,
        column_type=mtype, character_set=charset, column_length=length, flags=flags,
        decimals=decimals) + (_default_field(default) if field_list else b"")


def _default_field(default: str | None) -> bytes:
    return b"\xfb" if default is None else str_len(default.encode("utf-8"))
