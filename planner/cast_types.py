"""The Doris type a CAST names: `CAST(x AS DECIMALV3(10, 2))` is DECIMAL(10, 2), `DATETIMEV2(3)`
DATETIME(3), `LARGEINT` LARGEINT. The executor converts to its Arrow type; the binder reports it
as a select item's declared type, so that the result metadata (and the text of a DATETIME(3))
follow the CAST as Doris's do, not what the values happen to hold.

CHAR/VARCHAR lengths are not kept (a CAST does not truncate: executor/expressions/casts.py).
"""

from __future__ import annotations

from sqlglot import exp

from storage.types import ALIASES, DataType

_T = exp.DataType.Type
_SQLGLOT_KINDS: dict[object, str] = {
    _T.BOOLEAN: "BOOLEAN", _T.TINYINT: "TINYINT", _T.UTINYINT: "SMALLINT",
    _T.SMALLINT: "SMALLINT", _T.USMALLINT: "INT", _T.INT: "INT", _T.UINT: "BIGINT",
    _T.MEDIUMINT: "INT", _T.BIGINT: "BIGINT", _T.UBIGINT: "LARGEINT", _T.INT128: "LARGEINT",
    _T.FLOAT: "FLOAT", _T.DOUBLE: "DOUBLE", _T.DECIMAL: "DECIMAL", _T.BIGDECIMAL: "DECIMAL",
    _T.CHAR: "CHAR", _T.NCHAR: "CHAR", _T.VARCHAR: "VARCHAR", _T.NVARCHAR: "VARCHAR",
    _T.TEXT: "STRING", _T.DATE: "DATE", _T.DATE32: "DATE", _T.DATETIME: "DATETIME",
    _T.DATETIME64: "DATETIME", _T.TIMESTAMP: "DATETIME", _T.TIMESTAMPTZ: "DATETIME",
    _T.TIMESTAMPNTZ: "DATETIME", _T.TIMESTAMPLTZ: "DATETIME",
}


def cast_kind(dt: exp.DataType) -> str | None:
    """The Doris type name of a scalar CAST target, or None (JSON, ARRAY, unknown)."""
    if dt.this == _T.USERDEFINED:
        return ALIASES.get(str(dt.args.get("kind") or "").upper())
    return _SQLGLOT_KINDS.get(dt.this)


def cast_type(dt: exp.DataType) -> DataType | None:
    """The Doris type of a scalar CAST target; None for others. ValueError for parameters the
    type does not allow (DECIMAL(50, 2))."""
    name = cast_kind(dt)
    if name is None:
        return None
    params = [int(p.this.this) if isinstance(p, exp.DataTypeParam) else int(p.this)
              for p in dt.expressions]
    if name in ("CHAR", "VARCHAR"):
        params = []
    if name == "DATETIME":
        params = params[:1]
    return DataType.of(name, *params)


def declared_cast_type(dt: exp.DataType) -> DataType | None:
    """The type a select item `CAST(x AS dt)` is reported as; None where the values decide
    (text: a CAST keeps the whole text, so VARCHAR(3) would misstate it; bad parameters)."""
    try:
        found = cast_type(dt)
    except ValueError:
        return None
    return None if found is None or found.is_string else found
