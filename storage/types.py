"""Column types: Doris's scalar type system and its mapping onto Arrow.

Owns `DataType`, the one description of a column's type used by every layer: the catalog stores
it, the planner infers with it, storage encodes by it, and the server derives MySQL column
metadata from it. Storage owns it (not the catalog) because tablets carry their own schema, as a
Doris BE does, and storage must not import the catalog.

Arrow mapping (what a scan returns):

    BOOLEAN -> bool          LARGEINT     -> decimal128(38, 0)  (see note)
    TINYINT -> int8          FLOAT        -> float32
    SMALLINT-> int16         DOUBLE       -> float64
    INT     -> int32         DECIMAL(p,s) -> decimal128(p, s)
    BIGINT  -> int64         DATE         -> date32
    CHAR/VARCHAR/STRING -> string          DATETIME(n)  -> timestamp[us]
    ARRAY<T> -> list<item: T's type>       (elements always nullable, as in Doris 2.1)
    MAP<K,V> -> map<K's type, V's type>    (Arrow's map: keys never NULL, values nullable)
    STRUCT<f1:T1,...> -> struct<f1: T1's type, ...>  (fields always nullable, as in Doris 2.1)
    JSON    -> arrow.json (Arrow's canonical JSON extension type over string): the value's
               normalized JSON text (compact, keys in inserted order); the extension type is
               what tells a JSON value from a string in results, functions and casts
    VARIANT -> arrow.json too: the value's canonical text (keys sorted, NULL members dropped,
               booleans 1/0: executor/expressions/variant_text.py); sub-values are extracted
               from it when read (`v['a']`), not stored as sub-columns as Doris does

Note: LARGEINT is a 128-bit integer whose extreme values have 39 digits; Arrow's decimal128 holds
38, so the two extreme 39-digit values are rejected on load with a clear error.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

INTEGER_KINDS = ("TINYINT", "SMALLINT", "INT", "BIGINT", "LARGEINT")
STRING_KINDS = ("CHAR", "VARCHAR", "STRING")
# BITMAP / HLL values are base64 text (storage/objects.py): stored and moved as strings.
OBJECT_KINDS = ("BITMAP", "HLL")
FLOAT_KINDS = ("FLOAT", "DOUBLE")
ALL_KINDS = (
    "BOOLEAN", *INTEGER_KINDS, *FLOAT_KINDS, "DECIMAL", "DATE", "DATETIME", *STRING_KINDS,
    *OBJECT_KINDS, "ARRAY", "MAP", "STRUCT", "JSON", "VARIANT",
)
NESTED_KINDS = ("ARRAY", "MAP", "STRUCT")  # Doris's complex types: no key, no zone map values
JSON_ARROW = pa.json_()  # the Arrow type of a JSON column (storage type: string)
MAX_ARRAY_DEPTH = 9  # Doris's ColumnDefinition: "Type exceeds the maximum nesting depth of 9"
# Doris 2.1's Type.getMapSubTypes / getStructSubTypes: what a MAP key may be (primitive types).
MAP_KEY_KINDS = ("BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "LARGEINT", "FLOAT",
                 "DOUBLE", "DECIMAL", "DATE", "DATETIME", "CHAR", "VARCHAR", "STRING")

# Names users may write, mapped to the canonical kind (Doris accepts the V2/V3 spellings).
ALIASES = {
    "BOOL": "BOOLEAN", "BOOLEAN": "BOOLEAN", "TINYINT": "TINYINT", "SMALLINT": "SMALLINT",
    "INT": "INT", "INTEGER": "INT", "BIGINT": "BIGINT", "LARGEINT": "LARGEINT",
    "FLOAT": "FLOAT", "DOUBLE": "DOUBLE", "DECIMAL": "DECIMAL", "DECIMALV2": "DECIMAL",
    "DECIMALV3": "DECIMAL", "NUMERIC": "DECIMAL", "DATE": "DATE", "DATEV2": "DATE",
    "DATETIME": "DATETIME", "DATETIMEV2": "DATETIME", "CHAR": "CHAR", "VARCHAR": "VARCHAR",
    "STRING": "STRING", "TEXT": "STRING", "BITMAP": "BITMAP", "HLL": "HLL",
    "JSON": "JSON", "JSONB": "JSON", "VARIANT": "VARIANT",
}

_ARROW = {
    "BOOLEAN": pa.bool_(), "TINYINT": pa.int8(), "SMALLINT": pa.int16(), "INT": pa.int32(),
    "BIGINT": pa.int64(), "LARGEINT": pa.decimal128(38, 0), "FLOAT": pa.float32(),
    "DOUBLE": pa.float64(), "DATE": pa.date32(), "DATETIME": pa.timestamp("us"),
    "CHAR": pa.string(), "VARCHAR": pa.string(), "STRING": pa.string(),
    "BITMAP": pa.string(), "HLL": pa.string(), "JSON": JSON_ARROW,
    "VARIANT": JSON_ARROW,
}

# Bytes a value takes in the short key (prefix) index, as seed 004 counts them.
_KEY_BYTES = {
    "BOOLEAN": 1, "TINYINT": 1, "SMALLINT": 2, "INT": 4, "BIGINT": 8, "LARGEINT": 16,
    "FLOAT": 4, "DOUBLE": 8, "DECIMAL": 16, "DATE": 4, "DATETIME": 8,
}

STRING_MAX_LENGTH = 2147483643
VARCHAR_MAX_LENGTH = 65533
CHAR_MAX_LENGTH = 255


@dataclass(frozen=True)
class StructField:
    """One field of a STRUCT (or MAP's `key` / `value`): name, type, optional comment."""

    name: str
    type: DataType
    comment: str = ""


@dataclass(frozen=True)
class DataType:
    """A Doris column type: kind plus length (CHAR/VARCHAR) or precision/scale; ARRAY its
    element, MAP its `key` and `value` fields, STRUCT its named fields."""

    kind: str
    length: int = 0
    precision: int = 0
    scale: int = 0
    element: DataType | None = None  # ARRAY's element type
    fields: tuple[StructField, ...] = ()  # MAP's (key, value), STRUCT's fields

    @staticmethod
    def array_of(element: DataType) -> DataType:
        return DataType("ARRAY", element=element)

    @staticmethod
    def map_of(key: DataType, value: DataType) -> DataType:
        return DataType("MAP", fields=(StructField("key", key), StructField("value", value)))

    @staticmethod
    def struct_of(fields: tuple[StructField, ...] | list[StructField]) -> DataType:
        return DataType("STRUCT", fields=tuple(fields))

    @staticmethod
    def of(kind: str, *args: int) -> DataType:
        """Build a type from a (possibly aliased) name and its numeric arguments, validating them."""
        canonical = ALIASES.get(kind.upper())
        if canonical is None:
            raise ValueError(f"Unknown type: {kind}")
        if canonical == "DECIMAL":
            precision = args[0] if args else 9
            scale = args[1] if len(args) > 1 else 0
            if not 1 <= precision <= 38:
                raise ValueError(f"Decimal precision must be between 1 and 38, got {precision}")
            if not 0 <= scale <= precision:
                raise ValueError(f"Decimal scale {scale} must be between 0 and precision {precision}")
            return DataType("DECIMAL", precision=precision, scale=scale)
        if canonical == "CHAR":
            length = args[0] if args else 1
            if not 1 <= length <= CHAR_MAX_LENGTH:
                raise ValueError(f"Char size must be between 1 and {CHAR_MAX_LENGTH}, got {length}")
            return DataType("CHAR", length=length)
        if canonical == "VARCHAR":
            length = args[0] if args else VARCHAR_MAX_LENGTH
            if not 1 <= length <= VARCHAR_MAX_LENGTH:
                raise ValueError(
                    f"Varchar size must be between 1 and {VARCHAR_MAX_LENGTH}, got {length}")
            return DataType("VARCHAR", length=length)
        if canonical == "DATETIME":
            scale = args[0] if args else 0
            if not 0 <= scale <= 6:
                raise ValueError(f"Scale of datetime must between 0 and 6. Scale was set to: {scale}")
            return DataType("DATETIME", scale=scale)
        if canonical in ("STRING", *OBJECT_KINDS):
            return DataType(canonical, length=STRING_MAX_LENGTH)
        return DataType(canonical)

    # -- classification ------------------------------------------------------------------------
    @property
    def is_integer(self) -> bool:
        return self.kind in INTEGER_KINDS

    @property
    def is_string(self) -> bool:
        """Stored as text: the string kinds, and BITMAP / HLL (base64 text)."""
        return self.kind in STRING_KINDS or self.kind in OBJECT_KINDS

    @property
    def is_object(self) -> bool:
        return self.kind in OBJECT_KINDS

    @property
    def is_float(self) -> bool:
        return self.kind in FLOAT_KINDS

    @property
    def is_numeric(self) -> bool:
        return self.is_integer or self.is_float or self.kind == "DECIMAL"

    @property
    def is_temporal(self) -> bool:
        return self.kind in ("DATE", "DATETIME")

    @property
    def is_array(self) -> bool:
        return self.kind == "ARRAY"

    @property
    def is_map(self) -> bool:
        return self.kind == "MAP"

    @property
    def is_struct(self) -> bool:
        return self.kind == "STRUCT"

    @property
    def is_nested(self) -> bool:
        """ARRAY, MAP or STRUCT: Doris's complex types, which share its column rules."""
        return self.kind in NESTED_KINDS

    @property
    def holds_map_or_struct(self) -> bool:
        """A MAP or STRUCT, or an ARRAY with one at any depth (a JSON object is read as its
        text for such a column: Arrow's JSON reader would make any object a struct)."""
        if self.kind in ("MAP", "STRUCT"):
            return True
        return self.kind == "ARRAY" and self.element is not None and \
            self.element.holds_map_or_struct

    @property
    def map_key(self) -> DataType:
        return self.fields[0].type

    @property
    def map_value(self) -> DataType:
        return self.fields[1].type

    def field(self, name: str) -> StructField | None:
        """A STRUCT's field by name, case-insensitively (StructType.getField)."""
        low = name.lower()
        return next((f for f in self.fields if f.name.lower() == low), None)

    @property
    def is_json(self) -> bool:
        """A JSON document held as its text: JSON, and VARIANT (which Doris stores as
        sub-columns; here the canonical text, storage/types.py's note)."""
        return self.kind in ("JSON", "VARIANT")

    @property
    def is_variant(self) -> bool:
        return self.kind == "VARIANT"

    @property
    def has_zone_values(self) -> bool:
        """Zone maps keep min/max for this type (complex types and JSON keep has_null only)."""
        return self.kind not in (*NESTED_KINDS, "JSON", "VARIANT")

    @property
    def depth(self) -> int:
        """Nesting depth of complex types (0 for a scalar type)."""
        if self.element is not None:
            return 1 + self.element.depth
        if self.fields:
            return 1 + max(f.type.depth for f in self.fields)
        return 0

    # -- mappings ------------------------------------------------------------------------------
    def arrow(self) -> pa.DataType:
        if self.element is not None:
            return pa.list_(self.element.arrow())
        if self.kind == "MAP":
            return pa.map_(self.map_key.arrow(), self.map_value.arrow())
        if self.kind == "STRUCT":
            return pa.struct([pa.field(f.name, f.type.arrow()) for f in self.fields])
        if self.kind == "DECIMAL":
            return pa.decimal128(self.precision, self.scale)
        return _ARROW[self.kind]

    def key_bytes(self) -> int:
        """Width in the short key index; CHAR is its length, VARCHAR/STRING are variable (-1)."""
        if self.kind == "CHAR":
            return self.length
        if self.kind in ("VARCHAR", "STRING", *NESTED_KINDS, "JSON", "VARIANT", *OBJECT_KINDS):
            return -1
        return _KEY_BYTES[self.kind]

    def sql(self) -> str:
        """Doris's canonical spelling, as SHOW CREATE TABLE and DESC print it (Doris 2.1's
        ArrayType.toSql: `array<int>`, elements nullable; MapType.toSql `MAP<text,int>`;
        StructType.toSql `struct<f1:int,f2:text comment 'c'>`)."""
        if self.element is not None:
            return f"array<{self.element.sql()}>"
        if self.kind == "MAP":
            return f"MAP<{self.map_key.sql()},{self.map_value.sql()}>"
        if self.kind == "STRUCT":
            return f"struct<{_fields_sql(self.fields, DataType.sql, 'comment')}>"
        if self.kind == "DECIMAL":
            return f"decimal({self.precision},{self.scale})"
        if self.kind in ("CHAR", "VARCHAR"):
            return f"{self.kind.lower()}({self.length})"
        if self.kind == "DATETIME" and self.scale:
            return f"datetime({self.scale})"
        if self.kind == "STRING":
            return "text"
        return self.kind.lower()

    def desc_sql(self) -> str:
        """The spelling DESC uses (upper case as Doris prints it there; ArrayType.toString
        upper-cases the whole text: `ARRAY<INT>`)."""
        if self.element is not None:
            return f"ARRAY<{self.element.desc_sql()}>".upper()
        if self.kind == "MAP":  # MapType.toString: toSql upper-cased
            return f"MAP<{self.map_key.desc_sql()},{self.map_value.desc_sql()}>".upper()
        if self.kind == "STRUCT":  # StructType.toString: field names as written
            return f"STRUCT<{_fields_sql(self.fields, DataType.desc_sql, 'COMMENT')}>"
        if self.kind == "DECIMAL":
            return f"DECIMAL({self.precision}, {self.scale})"
        if self.kind in ("CHAR", "VARCHAR"):
            return f"{self.kind}({self.length})"
        if self.kind == "DATETIME" and self.scale:
            return f"DATETIME({self.scale})"
        if self.kind == "STRING":
            return "TEXT"
        return self.kind

    def show_columns_sql(self) -> str:
        """The spelling SHOW [FULL] COLUMNS uses: Doris's type name in lower case, with the
        V2/V3 names its DATE, DATETIME and DECIMAL columns have (`datetimev2(0)`)."""
        if self.element is not None:
            return f"array<{self.element.show_columns_sql()}>"
        if self.kind == "MAP":
            return f"map<{self.map_key.show_columns_sql()},{self.map_value.show_columns_sql()}>"
        if self.kind == "STRUCT":
            return "struct<" + ",".join(f"{f.name}:{f.type.show_columns_sql()}"
                                        for f in self.fields) + ">"
        if self.kind == "DECIMAL":
            return f"decimalv3({self.precision},{self.scale})"
        if self.kind == "DATETIME":
            return f"datetimev2({self.scale})"
        if self.kind == "DATE":
            return "datev2"
        return self.sql()

    def to_dict(self) -> dict:
        out = {"kind": self.kind, "length": self.length, "precision": self.precision,
               "scale": self.scale}
        if self.element is not None:
            out["element"] = self.element.to_dict()
        if self.fields:
            out["fields"] = [{"name": f.name, "type": f.type.to_dict(), "comment": f.comment}
                             for f in self.fields]
        return out

    @staticmethod
    def from_dict(d: dict) -> DataType:
        element = DataType.from_dict(d["element"]) if d.get("element") else None
        fields = tuple(StructField(f["name"], DataType.from_dict(f["type"]), f.get("comment", ""))
                       for f in d.get("fields", ()))
        return DataType(d["kind"], d.get("length", 0), d.get("precision", 0), d.get("scale", 0),
                        element, fields)

    def __str__(self) -> str:
        return self.sql()


def _fields_sql(fields: tuple[StructField, ...], spell, comment_word: str) -> str:
    """`f1:int,f2:text comment 'c'`: a STRUCT's fields as StructField.toSql / toString."""
    return ",".join(f"{f.name}:{spell(f.type)}"
                    + (f" {comment_word} '{f.comment}'" if f.comment else "") for f in fields)


def from_arrow(t: pa.DataType) -> DataType:
    """The Doris type a computed Arrow column is reported as (for result metadata and CTAS)."""
    if is_json_type(t):
        return DataType("JSON")
    if pa.types.is_map(t):
        return DataType.map_of(_element_of(t.key_type), _element_of(t.item_type))
    if pa.types.is_struct(t):
        return DataType.struct_of([StructField(f.name, _element_of(f.type)) for f in t])
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return DataType.array_of(_element_of(t.value_type))
    if pa.types.is_boolean(t):
        return DataType("BOOLEAN")
    for kind in ("TINYINT", "SMALLINT", "INT", "BIGINT"):
        if t == _ARROW[kind]:
            return DataType(kind)
    if pa.types.is_unsigned_integer(t):
        return DataType("BIGINT") if t.bit_width < 64 else DataType("LARGEINT")
    if t == pa.float32():
        return DataType("FLOAT")
    if pa.types.is_floating(t):
        return DataType("DOUBLE")
    if pa.types.is_decimal(t):
        return DataType("DECIMAL", precision=min(t.precision, 38), scale=t.scale)
    if pa.types.is_date(t):
        return DataType("DATE")
    if pa.types.is_timestamp(t):
        return DataType("DATETIME", scale=0 if t.unit == "s" else 6)
    if pa.types.is_null(t):
        return DataType("BOOLEAN")
    return DataType("STRING", length=STRING_MAX_LENGTH)


def _element_of(t: pa.DataType) -> DataType:
    """A nested value's type; an all-NULL one (Arrow's null type) is reported as BOOLEAN."""
    return DataType("BOOLEAN") if pa.types.is_null(t) else from_arrow(t)


# -- JSON values: the extension type over its storage strings ------------------------------------
def is_json_type(t: pa.DataType) -> bool:
    return isinstance(t, pa.BaseExtensionType) and t.extension_name == "arrow.json"


def json_storage(arr: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """The JSON texts (string) under a JSON array; any other array as it is."""
    if not is_json_type(arr.type):
        return arr
    if isinstance(arr, pa.ChunkedArray):
        return pa.chunked_array([c.storage for c in arr.chunks], arr.type.storage_type)
    return arr.storage


def as_json(texts: pa.Array) -> pa.Array:
    """Already normalized JSON texts (string) as a JSON array."""
    if is_json_type(texts.type):
        return texts
    if not pa.types.is_string(texts.type):
        texts = texts.cast(pa.string())
    return pa.ExtensionArray.from_storage(JSON_ARROW, texts)
