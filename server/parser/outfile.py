"""`SELECT ... INTO OUTFILE "file:///path/prefix_" [FORMAT AS CSV|CSV_WITH_NAMES|
CSV_WITH_NAMES_AND_TYPES|PARQUET|ORC] [PROPERTIES ("column_separator" = ..., ...)]`: the query
and its export clause, split where INTO OUTFILE stands at the statement's top level."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot.tokens import TokenType

from server.parser.tokens import TokenCursor

FORMATS = ("CSV", "CSV_WITH_NAMES", "CSV_WITH_NAMES_AND_TYPES", "PARQUET", "ORC")


@dataclass
class OutfileStmt:
    query: str                      # the SELECT's text
    path: str
    format: str = "CSV"
    properties: dict[str, str] = field(default_factory=dict)


def split_outfile(text: str, tokens: list) -> OutfileStmt | None:
    """The statement as a query plus its INTO OUTFILE clause; None without one."""
    depth = 0
    for i, t in enumerate(tokens):
        if t.token_type == TokenType.L_PAREN:
            depth += 1
        elif t.token_type == TokenType.R_PAREN:
            depth -= 1
        elif depth == 0 and t.text.upper() == "INTO" and i + 1 < len(tokens) and \
                tokens[i + 1].text.upper() == "OUTFILE":
            cur = TokenCursor(text, tokens[i + 2:])
            stmt = OutfileStmt(text[:t.start].rstrip(), cur.string("file path"))
            if cur.accept("FORMAT", "AS"):
                stmt.format = cur.identifier("format").upper()
            if cur.accept("PROPERTIES"):
                stmt.properties = cur.properties()
            cur.expect_end()
            return stmt
    return None
