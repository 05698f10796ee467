"""Index rules: which columns may have a bloom filter or a bitmap index, with Doris's messages.

Bloom filters (Doris `PropertyAnalyzer.analyzeBloomFilterColumns/Fpp`):
- `"bloom_filter_columns" = "a, b"`: names split at commas, trimmed, matched case-insensitively;
  TINYINT, FLOAT, DOUBLE and BOOLEAN columns are refused, so are value columns of an AGGREGATE
  table; a name given twice or unknown is refused. The property is stored with the columns'
  own names joined by ", " in the order a Java HashSet iterates them (Doris keeps them in a
  HashSet and SHOW CREATE TABLE joins that set).
- `"bloom_filter_fpp"` must parse as a double within [0.0001, 0.05] (default 0.05).

Bitmap and inverted indexes (Doris `IndexDef.analyze/checkColumn`, `CreateTableStmt`, `SchemaChangeHandler`):
- one column each, named and existing; FLOAT/DOUBLE (and other non-integer/decimal/date/string/
  boolean types) refused; on an AGGREGATE table only key columns;
- index names are unique in a table (case-insensitive), and so are the column sets of indexes of
  one type;
- an INVERTED index's PROPERTIES and parser follow catalog/inverted_rules.py.
"""

from __future__ import annotations

from catalog.errors import AnalysisError, DdlError
from catalog.model import AGG_KEYS, Column, TableIndex
from catalog.inverted_rules import check_parser
from catalog.statements import IndexDef

BF_COLUMNS = "bloom_filter_columns"
BF_FPP = "bloom_filter_fpp"
MIN_FPP, MAX_FPP = 0.0001, 0.05
_BF_REFUSED = ("TINYINT", "FLOAT", "DOUBLE", "BOOLEAN", "ARRAY", "MAP", "STRUCT", "JSON",
               "VARIANT")
_BITMAP_REFUSED = ("FLOAT", "DOUBLE", "ARRAY", "MAP", "STRUCT", "JSON", "VARIANT")
SUPPORTED_INDEX_TYPES = ("BITMAP", "INVERTED", "NGRAM_BF")
NGRAM_SIZE, NGRAM_BF_SIZE = "gram_size", "bf_size"
_NGRAM_KINDS = ("CHAR", "VARCHAR", "STRING")


def java_hash_set_order(names: list[str]) -> list[str]:
    """`names` in the iteration order of a java.util.HashSet they were added to in order."""
    def spread(s: str) -> int:
        h = 0
        for unit in memoryview(s.encode("utf-16-le")).cast("H"):
            h = (31 * h + unit) & 0xFFFFFFFF
        return h ^ (h >> 16)

    capacity = 16
    while len(names) > capacity * 0.75:
        capacity *= 2
    return sorted(names, key=lambda s: spread(s) & (capacity - 1))  # stable: bucket chains


def analyze_bloom_filter(properties: dict[str, str], columns: list[Column], keys_type: str) -> None:
    """Validate the bloom filter properties and store the column list in its canonical form."""
    if BF_FPP in properties:
        try:
            fpp = float(properties[BF_FPP])
        except ValueError:
            raise AnalysisError("Bloom filter fpp is not Double") from None
        if not MIN_FPP <= fpp <= MAX_FPP:
            raise AnalysisError("Bloom filter fpp should in [1.0E-4, 0.05]")
    if BF_COLUMNS not in properties:
        return
    raw = properties[BF_COLUMNS]
    chosen: list[str] = []
    seen: set[str] = set()
    for name in (n.strip() for n in raw.split(",")) if raw.strip() else ():
        col = next((c for c in columns if c.name.lower() == name.lower()), None)
        if col is None:
            raise AnalysisError("Bloom filter column does not exist in table. "
                                f"invalid column: {name}")
        if col.type.kind in _BF_REFUSED:
            raise AnalysisError(f"{col.type.kind} is not supported in bloom filter index. "
                                f"invalid column: {name}")
        if keys_type == AGG_KEYS and not col.is_key:
            raise AnalysisError("Bloom filter index should only be used in columns of "
                                "UNIQUE_KEYS/DUP_KEYS table or key columns of AGG_KEYS table. "
                                f"invalid column: {name}")
        if name.lower() in seen:
            raise AnalysisError(f"Reduplicated bloom filter column: {name}")
        seen.add(name.lower())
        chosen.append(col.name)
    properties[BF_COLUMNS] = ", ".join(java_hash_set_order(chosen))


def check_index_def(d: IndexDef, columns: list[Column], keys_type: str) -> Column:
    """Validate one INDEX definition against the table's columns; returns its column."""
    using = d.using.upper()
    if using not in SUPPORTED_INDEX_TYPES:
        raise AnalysisError(f"{using} index is not supported yet; only BITMAP, INVERTED and "
                            "NGRAM_BF indexes are")
    if len(d.columns) != 1:
        raise AnalysisError(f"{using} index can only apply to a single column.")
    if not d.name:
        raise AnalysisError("index name cannot be blank.")
    if len(d.name) > 64:
        raise AnalysisError("index name too long, the index name length at most is 64.")
    name = d.columns[0]
    col = next((c for c in columns if c.name.lower() == name.lower()), None)
    if col is None:
        raise AnalysisError(f"Column does not exist in table. invalid column: {name}")
    if using == "NGRAM_BF":
        check_ngram_bf(col, d.properties, keys_type)
        return col
    if col.type.kind in _BITMAP_REFUSED:
        raise AnalysisError(f"{col.type.kind} is not supported in {using} index. "
                            f"invalid index: {d.name}")
    if keys_type == AGG_KEYS and not col.is_key:
        raise AnalysisError(f"{using} index only used in columns of DUP_KEYS/UNIQUE_KEYS table "
                            f"or key columns of AGG_KEYS table. invalid index: {d.name}")
    if using == "INVERTED":
        check_parser(col, d.properties)
    return col


def check_ngram_bf(col: Column, properties: dict[str, str], keys_type: str) -> None:
    """Doris 2.1's IndexDef.checkColumn for NGRAM_BF: a CHAR / VARCHAR / STRING column (a
    value column only in DUP / UNIQUE tables), exactly `gram_size` in [1, 256] and `bf_size`
    in [64, 65535]."""
    if col.type.kind not in _NGRAM_KINDS:
        raise AnalysisError(f"{col.type.kind} is not supported in ngram_bf index. "
                            f"invalid column: {col.name}")
    if keys_type == AGG_KEYS and not col.is_key:
        raise AnalysisError("ngram_bf index only used in columns of DUP_KEYS/UNIQUE_KEYS table "
                            f"or key columns of AGG_KEYS table. invalid column: {col.name}")
    if len(properties) != 2:
        raise AnalysisError("ngram_bf index should have gram_size and bf_size properties")
    gram, bf = (_java_int(properties.get(k)) for k in (NGRAM_SIZE, NGRAM_BF_SIZE))
    if gram > 256 or gram < 1:
        raise AnalysisError("gram_size should be integer and less than 256")
    if bf > 65535 or bf < 64:
        raise AnalysisError("bf_size should be integer and between 64 and 65535")


def _java_int(text: str | None) -> int:
    """Integer.parseInt, with its NumberFormatException text in Doris's message."""
    if text is None:
        raise AnalysisError("invalid ngram properties:Cannot parse null string: null")
    body = text[1:] if text[:1] in "+-" else text
    if not body.isascii() or not body.isdigit():
        raise AnalysisError(f'invalid ngram properties:For input string: "{text}"')
    return int(text)


def create_table_indexes(defs: list[IndexDef], columns: list[Column],
                         keys_type: str) -> list[TableIndex]:
    """The indexes of a CREATE TABLE (ids 1, 2, ... within the table)."""
    out: list[TableIndex] = []
    for i, d in enumerate(defs, start=1):
        col = check_index_def(d, columns, keys_type)
        out.append(TableIndex(i, d.name, [col.name], d.using.upper(), d.comment,
                              dict(d.properties)))
    if len({t.name.lower() for t in out}) != len(out):
        raise AnalysisError("index name must be unique.")
    if len({(t.index_type, t.columns[0].lower()) for t in out}) != len(out):
        raise AnalysisError("same index columns have multiple same type index is not allowed.")
    return out


def check_new_index(d: IndexDef, existing: list[TableIndex]) -> None:
    """ALTER TABLE ADD INDEX / CREATE INDEX: the name and the column set must be new."""
    if any(i.name.lower() == d.name.lower() for i in existing):
        raise DdlError(f"index `{d.name}` already exist.")
    cols = [c.lower() for c in d.columns]
    if any(i.index_type == d.using.upper() and [c.lower() for c in i.columns] == cols
           for i in existing):
        raise DdlError(f"{d.using.upper()} index for columns ({', '.join(d.columns)} ) "
                       "already exist.")


def index_sql(index: TableIndex) -> str:
    """The INDEX clause SHOW CREATE TABLE prints (Doris `Index.toSql`)."""
    cols = ",".join(f"`{c}`" for c in index.columns)
    props = ""
    if index.properties:
        props = " PROPERTIES(" + ", ".join(f'"{k}" = "{v}"' for k, v in
                                           index.properties.items()) + ")"
    return f"INDEX {index.name} ({cols}) USING {index.index_type}{props} COMMENT '{index.comment}'"
