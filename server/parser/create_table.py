"""Parser for Doris's CREATE TABLE, which sqlglot cannot parse with aggregation types or ROLLUP.

    CREATE TABLE [IF NOT EXISTS] [db.]name LIKE [db.]source [WITH ROLLUP [(r1, ...)]]
    CREATE TABLE [IF NOT EXISTS] [db.]name (
        col type [KEY] [SUM|MAX|MIN|REPLACE|REPLACE_IF_NOT_NULL] [NULL|NOT NULL]
            [AUTO_INCREMENT[(n)]] [DEFAULT v] [COMMENT 'c'], ...
        [, INDEX name (cols) [USING BITMAP|INVERTED|NGRAM_BF] [PROPERTIES (...)] [COMMENT 'c']]
    )
    [ENGINE = olap]
    [AGGREGATE|UNIQUE|DUPLICATE KEY (cols)]
    [COMMENT 'c']
    [PARTITION BY RANGE|LIST (cols) (partition, ...)]
    [AUTO PARTITION BY RANGE (date_trunc(col, 'unit')) | LIST (cols) ([partition, ...])]
    [DISTRIBUTED BY HASH (cols) | RANDOM [BUCKETS n|AUTO]]
    [ROLLUP (name (cols) [DUPLICATE KEY (cols)] [PROPERTIES (...)], ...)]
    [PROPERTIES ("k" = "v", ...)]

Partition clauses (shared with ALTER TABLE ADD PARTITION) are in `partition_desc.py`.
"""

from __future__ import annotations

from sqlglot.tokens import TokenType

from catalog.errors import AnalysisError
from catalog.model import AGGREGATIONS
from catalog.statements import ColumnDef, CreateTableStmt, IndexDef, RollupDesc
from server.parser.batch_partitions import parse_batch
from server.parser.partition_desc import parse_partition_desc
from server.parser.tokens import TokenCursor
from storage.types import ALIASES, DataType, StructField

_KEYS = {"AGGREGATE": "AGG_KEYS", "UNIQUE": "UNIQUE_KEYS", "DUPLICATE": "DUP_KEYS"}


def parse_create_table(cur: TokenCursor) -> CreateTableStmt:
    cur.expect("CREATE")
    cur.accept("EXTERNAL")
    cur.expect("TABLE")
    if_not_exists = cur.accept("IF", "NOT", "EXISTS")
    db, name = cur.qualified_name()
    stmt = CreateTableStmt(db=db, name=name, columns=[], if_not_exists=if_not_exists)
    if cur.accept("LIKE"):  # CREATE TABLE t2 LIKE [db.]t1 [WITH ROLLUP [(r1, ...)]]
        stmt.like = cur.qualified_name()
        if cur.accept("WITH", "ROLLUP"):
            stmt.like_rollups = cur.paren_list(lambda: cur.identifier("rollup name")) \
                if cur.is_type(TokenType.L_PAREN) else []
        cur.expect_end()
        return stmt
    if cur.is_type(TokenType.L_PAREN) and not _starts_query(cur):
        _parse_elements(cur, stmt)
    _parse_clauses(cur, stmt)
    if stmt.query is None:
        if not stmt.columns:
            raise cur.error("Expected ( or AS")
        cur.expect_end()
    return stmt


def _starts_query(cur: TokenCursor) -> bool:
    """`CREATE TABLE t (SELECT ...)`: a parenthesised query, not a column list."""
    return cur.is_word("SELECT", ahead=1) or cur.is_word("WITH", ahead=1)


def _parse_elements(cur: TokenCursor, stmt: CreateTableStmt) -> None:
    cur.expect_type(TokenType.L_PAREN, "(")
    while True:
        if cur.is_word("INDEX"):
            stmt.indexes.append(_parse_index(cur))
        else:
            stmt.columns.append(parse_column_def(cur))
        if cur.accept_type(TokenType.R_PAREN):
            return
        cur.expect_type(TokenType.COMMA, ", or )")


# MySQL type names that tools generating DDL send (Spark's MySQL dialect: LONGTEXT, DOUBLE
# PRECISION, BIT(1), TIMESTAMP), as the Doris types MySQL's mean.
MYSQL_TYPE_NAMES = {
    "LONGTEXT": "STRING", "MEDIUMTEXT": "STRING", "TINYTEXT": "STRING", "REAL": "DOUBLE",
    "TIMESTAMP": "DATETIME", "MEDIUMINT": "INT", "DEC": "DECIMAL", "FIXED": "DECIMAL",
    "BIT": "BOOLEAN", "DOUBLE PRECISION": "DOUBLE",
}


def parse_type(cur: TokenCursor) -> DataType:
    word = cur.identifier("column type").upper()
    if word == "ARRAY":  # ARRAY<T>, T any type here (ARRAY<ARRAY<INT>> too)
        cur.expect_type(TokenType.LT, "<")
        element = parse_type(cur)
        cur.expect_type(TokenType.GT, ">")
        return DataType.array_of(element)
    if word == "MAP":  # MAP<K, V>; the key's kind is checked by the catalog
        cur.expect_type(TokenType.LT, "<")
        key = parse_type(cur)
        cur.expect_type(TokenType.COMMA, ",")
        value = parse_type(cur)
        cur.expect_type(TokenType.GT, ">")
        return DataType.map_of(key, value)
    if word == "STRUCT":  # STRUCT<f1:T1 [COMMENT 'c'], ...>
        cur.expect_type(TokenType.LT, "<")
        fields = [_parse_struct_field(cur)]
        while cur.accept_type(TokenType.COMMA):
            fields.append(_parse_struct_field(cur))
        cur.expect_type(TokenType.GT, ">")
        return DataType.struct_of(fields)
    if word == "BIT" and cur.is_type(TokenType.L_PAREN):
        width = cur.paren_list(lambda: cur.number("type argument"))
        if width != [1]:
            raise AnalysisError(f"Unknown data type: BIT({', '.join(map(str, width))})")
    word = MYSQL_TYPE_NAMES.get(word, word)
    if word not in ALIASES:
        raise AnalysisError(f"Unknown data type: {word}" if word.isidentifier()
                            else f"Syntax error: unexpected '{word}'")
    args: list[int] = []
    if cur.is_type(TokenType.L_PAREN):
        args = cur.paren_list(lambda: cur.number("type argument"))
    if ALIASES[word] in ("INT", "TINYINT", "SMALLINT", "BIGINT", "LARGEINT", "BOOLEAN"):
        args = []  # INT(11): display width, ignored as Doris does
    try:
        return DataType.of(word, *args)
    except ValueError as e:
        raise AnalysisError(str(e)) from None


def _parse_struct_field(cur: TokenCursor) -> StructField:
    name = cur.identifier("struct field name")
    cur.expect_type(TokenType.COLON, ":")
    dtype = parse_type(cur)
    comment = cur.string("comment") if cur.accept("COMMENT") else ""
    return StructField(name, dtype, comment)


def parse_column_def(cur: TokenCursor, stop: tuple[str, ...] = ()) -> ColumnDef:
    """One column definition, up to `,`, `)`, the end or a word of `stop`."""
    name = cur.identifier("column name")
    col = ColumnDef(name=name, type=parse_type(cur))
    while not (cur.is_type(TokenType.COMMA) or cur.is_type(TokenType.R_PAREN) or cur.at_end()
               or any(cur.is_word(w) for w in stop)):
        if cur.accept("KEY"):
            col.key = True
            continue
        word = cur.peek().text.upper()
        if word in AGGREGATIONS or word == "QUANTILE_UNION":
            cur.next()
            if word not in AGGREGATIONS:
                raise AnalysisError(f"Aggregate type {word} is not supported yet")
            col.aggregation = word
        elif cur.accept("NOT", "NULL"):
            col.nullable = False
        elif cur.accept("NULL"):
            col.nullable = True
        elif cur.accept("AUTO_INCREMENT"):
            col.auto_increment = True
            if cur.is_type(TokenType.L_PAREN):
                start = cur.paren_list(lambda: cur.literal())
                try:
                    col.auto_increment_start = int(start[0]) if len(start) == 1 else None
                except (TypeError, ValueError):
                    col.auto_increment_start = None
                if col.auto_increment_start is None:
                    raise cur.error("Expected an integer auto increment start")
        elif cur.accept("DEFAULT"):
            col.has_default = True
            col.default = _default_value(cur)
        elif cur.accept("ON", "UPDATE"):
            cur.next()
        elif cur.accept("COMMENT"):
            col.comment = cur.string("comment")
        else:
            raise cur.error(f"Unexpected word in definition of column '{name}'")
    return col


def _default_value(cur: TokenCursor) -> str | None:
    t = cur.peek()
    if t is not None and t.text.upper() in ("CURRENT_TIMESTAMP", "NOW"):
        cur.next()
        if cur.is_type(TokenType.L_PAREN):
            cur.paren_list(lambda: cur.number())
        return "CURRENT_TIMESTAMP"
    return cur.literal()


def _parse_index(cur: TokenCursor) -> IndexDef:
    cur.expect("INDEX")
    cur.accept("IF", "NOT", "EXISTS")
    name = cur.identifier("index name")
    cols = cur.paren_list(lambda: cur.identifier("column name"))
    using = "BITMAP"
    idx = IndexDef(name=name, columns=cols, using=using)
    if cur.accept("USING"):
        idx.using = cur.identifier("index type").upper()
    if cur.accept("PROPERTIES"):
        idx.properties = cur.properties()
    if cur.accept("COMMENT"):
        idx.comment = cur.string("comment")
    return idx


def _parse_clauses(cur: TokenCursor, stmt: CreateTableStmt) -> None:
    while not cur.at_end():
        if cur.accept("ENGINE"):
            cur.expect_type(TokenType.EQ, "=")
            stmt.engine = cur.identifier("engine").lower()
        elif any(cur.is_word(k, "KEY") for k in _KEYS) or cur.is_word("UNIQ", "KEY"):
            word = cur.next().text.upper()
            cur.expect("KEY")
            stmt.keys_type = _KEYS.get(word, "UNIQUE_KEYS")
            stmt.key_columns = cur.paren_list(lambda: cur.identifier("key column"))
        elif cur.accept("COMMENT"):
            stmt.comment = cur.string("comment")
        elif cur.accept("PARTITION", "BY"):
            _parse_partition_by(cur, stmt)
        elif cur.accept("AUTO", "PARTITION", "BY"):
            stmt.auto_partition = True
            _parse_partition_by(cur, stmt)
        elif cur.accept("DISTRIBUTED", "BY"):
            _parse_distribution(cur, stmt)
        elif cur.accept("ROLLUP"):
            stmt.rollups = cur.paren_list(lambda: _parse_rollup(cur))
        elif cur.accept("PROPERTIES"):
            stmt.properties = cur.properties()
        elif cur.accept("AS") or cur.is_type(TokenType.L_PAREN) or cur.is_word("SELECT"):
            stmt.query = cur.rest_sql()  # CREATE TABLE ... AS <query> (ddl.create_table_as)
            return
        else:
            raise cur.error("Unexpected clause in CREATE TABLE")


def _parse_partition_by(cur: TokenCursor, stmt: CreateTableStmt) -> None:
    if cur.accept("RANGE"):
        stmt.partition_kind = "RANGE"
    elif cur.accept("LIST"):
        stmt.partition_kind = "LIST"
    else:
        raise cur.error("Expected RANGE or LIST")
    if stmt.auto_partition and stmt.partition_kind == "RANGE":
        _parse_auto_range_function(cur, stmt)
    else:
        stmt.partition_columns = cur.paren_list(lambda: cur.identifier("partition column"))
    cur.expect_type(TokenType.L_PAREN, "(")
    if cur.accept_type(TokenType.R_PAREN):
        return  # `()`: no partitions yet (dynamic partitions fill it)
    while True:
        if cur.is_word("FROM") and stmt.partition_kind == "RANGE":
            stmt.partitions.extend(parse_batch(cur))  # FROM .. TO .. INTERVAL
        else:
            stmt.partitions.append(parse_partition_desc(cur, stmt.partition_kind))
        if cur.accept_type(TokenType.R_PAREN):
            return
        cur.expect_type(TokenType.COMMA, ", or )")


def _parse_auto_range_function(cur: TokenCursor, stmt: CreateTableStmt) -> None:
    """`(date_trunc(col, 'unit'))`, or without the outer parentheses (Doris 2.1.0's form)."""
    outer = cur.accept_type(TokenType.L_PAREN)
    func = cur.identifier("partition function").lower()
    if func != "date_trunc":
        raise AnalysisError("auto create partition only support function call expr is "
                            "date_trunc, date_floor or date_ceil.")
    cur.expect_type(TokenType.L_PAREN, "(")
    stmt.partition_columns = [cur.identifier("partition column")]
    cur.expect_type(TokenType.COMMA, ",")
    stmt.auto_unit = cur.string("time unit").lower()
    cur.expect_type(TokenType.R_PAREN, ")")
    if outer:
        cur.expect_type(TokenType.R_PAREN, ")")


def _parse_distribution(cur: TokenCursor, stmt: CreateTableStmt) -> None:
    if cur.accept("HASH"):
        stmt.distribution_kind = "HASH"
        stmt.distribution_columns = cur.paren_list(lambda: cur.identifier("distribution column"))
    elif cur.accept("RANDOM"):
        stmt.distribution_kind = "RANDOM"
    else:
        raise cur.error("Expected HASH or RANDOM")
    if cur.accept("BUCKETS"):
        if cur.accept("AUTO"):
            stmt.buckets = None
        else:
            stmt.buckets = cur.number("bucket number")
            if stmt.buckets <= 0:
                raise AnalysisError("Number of hash distribution should be greater than zero.")


def _parse_rollup(cur: TokenCursor) -> RollupDesc:
    name = cur.identifier("rollup name")
    cols = cur.paren_list(lambda: cur.identifier("column name"))
    rollup = RollupDesc(name=name, columns=cols)
    if cur.accept("DUPLICATE", "KEY"):
        rollup.dup_keys = cur.paren_list(lambda: cur.identifier("column name"))
    if cur.accept("PROPERTIES"):
        rollup.properties = cur.properties()
    return rollup
