"""Parser for one partition clause, shared by CREATE TABLE and ALTER TABLE ADD PARTITION.

    PARTITION [IF NOT EXISTS] p VALUES LESS THAN (MAXVALUE | ("v1", ...)) [("k" = "v")]
    PARTITION [IF NOT EXISTS] p VALUES [("lo", ...), ("hi", ...))
    PARTITION [IF NOT EXISTS] p VALUES IN ("a", "b") | (("a", 1), ("b", 2))
"""

from __future__ import annotations

from sqlglot.tokens import TokenType

from catalog.statements import PartitionDesc
from server.parser.tokens import TokenCursor


def _tuple(cur: TokenCursor) -> list[str | None]:
    if cur.accept("MAXVALUE"):
        return [None]
    return cur.paren_list(cur.literal)


def parse_partition_desc(cur: TokenCursor, kind: str | None) -> PartitionDesc:
    cur.expect("PARTITION")
    if_not_exists = cur.accept("IF", "NOT", "EXISTS")
    name = cur.identifier("partition name")
    cur.expect("VALUES")
    if cur.accept("LESS", "THAN"):
        desc = PartitionDesc(name=name, kind="LESS_THAN", upper=_tuple(cur))
    elif cur.accept_type(TokenType.L_BRACKET):
        lower = _tuple(cur)
        cur.expect_type(TokenType.COMMA, ",")
        upper = _tuple(cur)
        cur.expect_type(TokenType.R_PAREN, ")")
        desc = PartitionDesc(name=name, kind="FIXED", lower=lower, upper=upper)
    elif cur.accept("IN"):
        cur.expect_type(TokenType.L_PAREN, "(")
        values: list[list[str | None]] = []
        while True:
            if cur.is_type(TokenType.L_PAREN):
                values.append(cur.paren_list(cur.literal))
            else:
                values.append([cur.literal()])
            if cur.accept_type(TokenType.R_PAREN):
                break
            cur.expect_type(TokenType.COMMA, ", or )")
        desc = PartitionDesc(name=name, kind="IN", values=values)
    else:
        raise cur.error("Expected LESS THAN, [ or IN")
    if cur.is_type(TokenType.L_PAREN) and cur.is_type(TokenType.STRING, ahead=1):
        desc.properties = cur.properties()
    desc.if_not_exists = if_not_exists
    return desc
