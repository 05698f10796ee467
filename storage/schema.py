"""Tablet schema: the columns a tablet stores, its keys type and its short key (prefix) layout.

Owns `TabletColumn` and `TabletSchema`. A tablet carries its own schema (as a Doris BE does), so
storage never consults the catalog. The catalog builds a `TabletSchema` per materialized index and
journals it through `to_dict()`.

Short key (prefix index) columns, seed 004 "前缀索引" and Doris FE `calcShortKeyColumnCount`:

    walk the key columns in order, at most 3 of them, summing their index widths
      - a FLOAT/DOUBLE key ends the prefix before it (Doris refuses floating keys anyway)
      - INT 4, BIGINT 8, LARGEINT/DECIMAL 16, DATE 4, DATETIME 8, CHAR(n) n bytes,
        VARCHAR/STRING 20 bytes ("message(prefix 20 Bytes)", "user_name(20 Bytes)")
      - when the sum would pass 36 bytes: a CHAR/VARCHAR/STRING column is still taken, cut to the
        bytes that remain; any other column ends the prefix before it
      - a VARCHAR/STRING column is the last one taken ("遇到 VARCHAR ... 直接截断")

    e.g. (user_id BIGINT, age INT, message VARCHAR(100), ...) -> 3 columns: 8 + 4 + 20 bytes.

Optional indexes (seed 003 §5, §6), declared by the catalog and written by every new segment:
`bloom_filter_columns` with `bloom_filter_fpp` (a bloom filter per data page) and
`bitmap_indexes` (column -> index id; a bitmap index per segment) and `inverted_indexes` (column
-> index id and PROPERTIES; an inverted index of the column's terms per segment). The index id names the side
files that hold the index for segments written before the index was added (tablet.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from storage.types import DataType

AGG_KEYS = "AGG_KEYS"
UNIQUE_KEYS = "UNIQUE_KEYS"
DUP_KEYS = "DUP_KEYS"
KEYS_TYPES = (AGG_KEYS, UNIQUE_KEYS, DUP_KEYS)
AGGREGATIONS = ("SUM", "MAX", "MIN", "REPLACE", "REPLACE_IF_NOT_NULL", "BITMAP_UNION", "HLL_UNION")

# Doris's hidden columns of a Unique table (catalog/hidden_columns.py): the batch delete sign
# (a REPLACE value; rows whose merged sign is 1 are deleted), the load version, and the
# sequence column of `function_column.sequence_type` / `sequence_col` tables.
DELETE_SIGN = "__DORIS_DELETE_SIGN__"
VERSION_COL = "__DORIS_VERSION_COL__"
SEQUENCE_COL = "__DORIS_SEQUENCE_COL__"

SHORT_KEY_MAX_BYTES = 36
SHORT_KEY_MAX_COLUMNS = 3
VARCHAR_INDEX_BYTES = 20


@dataclass(frozen=True)
class TabletColumn:
    """One stored column. `aggregation` is set only on AGG_KEYS value columns."""

    name: str
    type: DataType
    is_key: bool = False
    aggregation: str | None = None
    nullable: bool = True
    # Doris's column unique id (-1: none yet): how rowsets written under an older schema find
    # this column after RENAME / DROP / ADD COLUMN (storage/column_mapping.py); `default`
    # fills it for rowsets written before it was added.
    unique_id: int = -1
    default: str | None = None

    def to_dict(self) -> dict:
        d = {"name": self.name, "type": self.type.to_dict(), "is_key": self.is_key,
             "aggregation": self.aggregation, "nullable": self.nullable}
        if self.unique_id >= 0:
            d["unique_id"] = self.unique_id
        if self.default is not None:
            d["default"] = self.default
        return d

    @staticmethod
    def from_dict(d: dict) -> TabletColumn:
        return TabletColumn(d["name"], DataType.from_dict(d["type"]), d["is_key"],
                            d.get("aggregation"), d.get("nullable", True),
                            int(d.get("unique_id", -1)), d.get("default"))


@dataclass
class TabletSchema:
    """Columns (keys first, in sort order), the data model and the derived short key layout."""

    columns: list[TabletColumn]
    keys_type: str = DUP_KEYS
    bloom_filter_columns: tuple[str, ...] = ()
    bloom_filter_fpp: float = 0.05
    bitmap_indexes: dict[str, int] = field(default_factory=dict)  # column -> index id
    # UNIQUE: among rows with equal keys the largest value of this column wins (Doris's
    # function_column.sequence_col), ties going to the later load.
    sequence_column: str | None = None
    # unique id -> the column's name in rowsets written before the table had unique ids (its
    # first light schema change): such rowsets carry no `column_ids`.
    origin_names: dict[int, str] = field(default_factory=dict)
    # UNIQUE base index of an `enable_unique_key_merge_on_write` table: reads apply the
    # tablet's delete bitmap instead of merging keys (storage/mow.py, storage/delete_bitmap.py)
    merge_on_write: bool = False
    # column -> {"index_id": id, "properties": {parser, lower_case, ...}}: an INVERTED index
    # (storage/inverted/index.py) per segment
    inverted_indexes: dict[str, dict] = field(default_factory=dict)
    # column -> {"gram_size": n, "bf_size": bytes}: an NGRAM_BF index (segment/ngram_bloom.py)
    ngram_bf_indexes: dict[str, dict] = field(default_factory=dict)
    short_key_widths: list[int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.columns = list(self.columns)
        self.bloom_filter_columns = tuple(self.bloom_filter_columns)
        self.bitmap_indexes = dict(self.bitmap_indexes)
        self.inverted_indexes = {k: {"index_id": int(v["index_id"]),
                                     "properties": dict(v.get("properties", {}))}
                                 for k, v in self.inverted_indexes.items()}
        self.ngram_bf_indexes = {k: {"gram_size": int(v["gram_size"]),
                                     "bf_size": int(v["bf_size"])}
                                 for k, v in self.ngram_bf_indexes.items()}
        _validate(self.columns, self.keys_type)
        names = {c.name for c in self.columns}
        seq = [self.sequence_column] if self.sequence_column else []
        for name in [*self.bloom_filter_columns, *self.bitmap_indexes, *self.inverted_indexes,
                     *self.ngram_bf_indexes, *seq]:
            if name not in names:
                raise ValueError(f"Index on unknown column {name}")
        if self.merge_on_write and self.keys_type != UNIQUE_KEYS:
            raise ValueError("Only a UNIQUE_KEYS tablet can merge on write")
        if not 0 < self.bloom_filter_fpp < 1:
            raise ValueError(f"Bloom filter fpp {self.bloom_filter_fpp} is not in (0, 1)")
        self._by_name = {c.name: i for i, c in enumerate(self.columns)}
        self._column_ids = {c.name: c.unique_id for c in self.columns if c.unique_id >= 0} \
            or None
        self.short_key_widths = _short_key_widths(self.key_columns)

    # -- lookups -------------------------------------------------------------------------------
    def merge_order(self) -> list[str]:
        """The sort that puts each key group's winning row last: keys, then the sequence."""
        return [*self.key_names, *([self.sequence_column] if self.sequence_column else [])]

    @property
    def key_columns(self) -> list[TabletColumn]:
        return [c for c in self.columns if c.is_key]

    @property
    def value_columns(self) -> list[TabletColumn]:
        return [c for c in self.columns if not c.is_key]

    @property
    def key_names(self) -> list[str]:
        return [c.name for c in self.columns if c.is_key]

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def short_key_column_count(self) -> int:
        return len(self.short_key_widths)

    @property
    def short_key_columns(self) -> list[TabletColumn]:
        return self.key_columns[: self.short_key_column_count]

    @property
    def has_delete_sign(self) -> bool:
        return DELETE_SIGN in self._by_name

    @property
    def merges_on_read(self) -> bool:
        """AGG and UNIQUE tablets merge rows with equal keys (in a load's memtable, and across
        rowsets when read unless the tablet merges on write)."""
        return self.keys_type != DUP_KEYS

    @property
    def merges_when_read(self) -> bool:
        """Reads merge keys across rowsets (AGG, and UNIQUE merge-on-read)."""
        return self.keys_type != DUP_KEYS and not self.merge_on_write

    def has_column(self, name: str) -> bool:
        return name in self._by_name

    def column(self, name: str) -> TabletColumn:
        i = self._by_name.get(name)
        if i is None:
            raise KeyError(f"Unknown column '{name}' in tablet schema")
        return self.columns[i]

    def aggregation_of(self, name: str) -> str | None:
        """How a value column merges: its AGG type; REPLACE for UNIQUE values; None for keys/DUP."""
        col = self.column(name)
        if col.is_key or self.keys_type == DUP_KEYS:
            return None
        if self.keys_type == UNIQUE_KEYS:
            return "REPLACE"
        return col.aggregation

    def column_ids(self) -> dict[str, int] | None:
        """name -> unique id of the columns that have one (None: no column has one), as
        RowsetMeta.column_ids records them for rowsets written under this schema (computed
        once: every scan of every rowset asks; callers must not change it)."""
        return self._column_ids

    def arrow_schema(self):
        import pyarrow as pa

        return pa.schema([pa.field(c.name, c.type.arrow(), c.nullable) for c in self.columns])

    # -- persistence ---------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {"columns": [c.to_dict() for c in self.columns], "keys_type": self.keys_type,
                "bloom_filter_columns": list(self.bloom_filter_columns),
                "bloom_filter_fpp": self.bloom_filter_fpp,
                "bitmap_indexes": dict(self.bitmap_indexes),
                "sequence_column": self.sequence_column,
                **({"origin_names": {str(k): v for k, v in self.origin_names.items()}}
                   if self.origin_names else {}),
                **({"merge_on_write": True} if self.merge_on_write else {}),
                **({"inverted_indexes": self.inverted_indexes} if self.inverted_indexes
                   else {}),
                **({"ngram_bf_indexes": self.ngram_bf_indexes} if self.ngram_bf_indexes
                   else {})}

    @staticmethod
    def from_dict(d: dict) -> TabletSchema:
        return TabletSchema([TabletColumn.from_dict(c) for c in d["columns"]], d["keys_type"],
                            tuple(d.get("bloom_filter_columns", ())),
                            float(d.get("bloom_filter_fpp", 0.05)),
                            {k: int(v) for k, v in d.get("bitmap_indexes", {}).items()},
                            d.get("sequence_column"),
                            {int(k): v for k, v in d.get("origin_names", {}).items()},
                            bool(d.get("merge_on_write", False)),
                            dict(d.get("inverted_indexes", {})),
                            dict(d.get("ngram_bf_indexes", {})))


def _validate(columns: list[TabletColumn], keys_type: str) -> None:
    if keys_type not in KEYS_TYPES:
        raise ValueError(f"Unknown keys type {keys_type!r}")
    if not columns or not columns[0].is_key:
        raise ValueError("A tablet schema needs at least one key column, first")
    names = [c.name for c in columns]
    if len(set(names)) != len(names):
        raise ValueError(f"Duplicate column name in tablet schema: {names}")
    seen_value = False
    for col in columns:
        if col.is_key and seen_value:
            raise ValueError(f"Key column {col.name} must come before value columns")
        seen_value = seen_value or not col.is_key
        _validate_aggregation(col, keys_type)


def _validate_aggregation(col: TabletColumn, keys_type: str) -> None:
    if col.aggregation is not None and col.aggregation not in AGGREGATIONS:
        raise ValueError(f"Unknown aggregation {col.aggregation!r} on column {col.name}")
    if col.is_key and col.aggregation is not None:
        raise ValueError(f"Key column {col.name} cannot have an aggregation")
    if keys_type == AGG_KEYS and not col.is_key and col.aggregation is None:
        raise ValueError(f"Value column {col.name} of an AGG_KEYS tablet needs an aggregation")
    if keys_type == DUP_KEYS and col.aggregation is not None:
        raise ValueError(f"Value column {col.name} of a DUP_KEYS tablet cannot aggregate")


def _short_key_widths(keys: list[TabletColumn]) -> list[int]:
    """Bytes each short key column contributes (string columns are cut to this many bytes)."""
    widths: list[int] = []
    used = 0
    for col in keys[:SHORT_KEY_MAX_COLUMNS]:
        if col.type.is_float:
            break
        width = col.type.key_bytes()
        if width < 0:
            width = VARCHAR_INDEX_BYTES
        if used + width > SHORT_KEY_MAX_BYTES:
            if col.type.is_string:
                widths.append(SHORT_KEY_MAX_BYTES - used)
            break
        widths.append(width)
        used += width
        if col.type.kind in ("VARCHAR", "STRING"):
            break
    return widths
