"""A token cursor over sqlglot's Doris tokenizer, for the project's own statement parsers.

sqlglot tokenizes every statement we need (it is only its *parser* that leaves some Doris
statements raw), so the hand-written parsers walk sqlglot tokens with this small cursor: keyword
tests are case-insensitive on the token text, identifiers may be keywords (`date DATE`), quoted
strings come without their quotes.
"""

from __future__ import annotations

from sqlglot.dialects.doris import Doris
from sqlglot.errors import TokenError
from sqlglot.tokens import Token, TokenType

from catalog.multi_catalog import check_catalog
from catalog.errors import SyntaxError_

_PUNCT = {
    TokenType.L_PAREN, TokenType.R_PAREN, TokenType.COMMA, TokenType.DOT, TokenType.EQ,
    TokenType.L_BRACKET, TokenType.R_BRACKET, TokenType.SEMICOLON, TokenType.STRING,
    TokenType.NUMBER, TokenType.LT, TokenType.GT, TokenType.STAR,
}
_DIALECT = Doris()


def tokenize(sql: str) -> list[Token]:
    try:
        return _DIALECT.tokenize(sql)
    except TokenError as e:
        raise SyntaxError_(f"Syntax error: {e}") from None


class TokenCursor:
    def __init__(self, sql: str, tokens: list[Token] | None = None):
        self.sql = sql
        self.tokens = tokens if tokens is not None else tokenize(sql)
        self.i = 0

    # -- looking -----------------------------------------------------------------------------
    def peek(self, ahead: int = 0) -> Token | None:
        j = self.i + ahead
        return self.tokens[j] if j < len(self.tokens) else None

    def at_end(self) -> bool:
        return self.i >= len(self.tokens) or self.tokens[self.i].token_type == TokenType.SEMICOLON

    def _match(self, words: tuple[str, ...], ahead: int = 0) -> int | None:
        """How many tokens spell `words` from the cursor; sqlglot fuses some keyword pairs
        ("PARTITION BY") into one token, so a token may cover several words."""
        want = [w.upper() for phrase in words for w in phrase.split()]
        j, k = self.i + ahead, 0
        while k < len(want):
            if j >= len(self.tokens) or self.tokens[j].token_type in _PUNCT \
                    or self.tokens[j].token_type == TokenType.IDENTIFIER:
                return None  # a `quoted` identifier is never a keyword (`index` column)
            got = self.tokens[j].text.upper().split()
            if want[k:k + len(got)] != got:
                return None
            k += len(got)
            j += 1
        return j - self.i - ahead

    def is_word(self, *words: str, ahead: int = 0) -> bool:
        return self._match(words, ahead) is not None

    def is_type(self, tt: TokenType, ahead: int = 0) -> bool:
        t = self.peek(ahead)
        return t is not None and t.token_type == tt

    # -- consuming -----------------------------------------------------------------------------
    def error(self, what: str) -> SyntaxError_:
        t = self.peek()
        near = f"near '{t.text}'" if t is not None else "at end of input"
        return SyntaxError_(f"Syntax error in line {t.line if t else 1}:\n{what} {near}")

    def next(self) -> Token:
        t = self.peek()
        if t is None:
            raise self.error("Unexpected end of statement")
        self.i += 1
        return t

    def accept(self, *words: str) -> bool:
        """Consume the words if they come next."""
        n = self._match(words)
        if n is None:
            return False
        self.i += n
        return True

    def expect(self, *words: str) -> None:
        if not self.accept(*words):
            raise self.error(f"Expected {' '.join(words)}")

    def accept_type(self, tt: TokenType) -> Token | None:
        if self.is_type(tt):
            return self.next()
        return None

    def expect_type(self, tt: TokenType, what: str) -> Token:
        t = self.accept_type(tt)
        if t is None:
            raise self.error(f"Expected {what}")
        return t

    def identifier(self, what: str = "identifier") -> str:
        t = self.peek()
        if t is None or t.token_type in _PUNCT:
            raise self.error(f"Expected {what}")
        self.i += 1
        return t.text

    def ident_or_text(self, what: str = "name") -> str:
        """Doris's `ident_or_text`: an identifier or a quoted string."""
        t = self.accept_type(TokenType.STRING)
        return t.text if t is not None else self.identifier(what)

    def qualified_name(self) -> tuple[str | None, str]:
        """[catalog.][db.]name; the catalog must be `internal` (catalog/multi_catalog.py)."""
        first = self.identifier("table name")
        if self.accept_type(TokenType.DOT):
            second = self.identifier("table name")
            if self.accept_type(TokenType.DOT):
                check_catalog(first)
                return second, self.identifier("table name")
            return first, second
        return None, first

    def string(self, what: str = "string literal") -> str:
        return self.expect_type(TokenType.STRING, what).text

    def number(self, what: str = "number") -> int:
        t = self.expect_type(TokenType.NUMBER, what)
        try:
            return int(t.text)
        except ValueError:
            raise self.error(f"Expected an integer {what}") from None

    def literal(self) -> str | None:
        """A partition/default value: string, number, MAXVALUE/NULL words; returns text."""
        t = self.next()
        if t.token_type in (TokenType.STRING, TokenType.NUMBER):
            return t.text
        if t.token_type == TokenType.DASH and self.is_type(TokenType.NUMBER):
            return "-" + self.next().text
        if t.text.upper() in ("MAXVALUE", "NULL"):
            return None
        raise SyntaxError_(f"Syntax error: unexpected '{t.text}' where a value was expected")

    def paren_list(self, item) -> list:
        self.expect_type(TokenType.L_PAREN, "(")
        items = []
        if not self.accept_type(TokenType.R_PAREN):
            while True:
                items.append(item())
                if self.accept_type(TokenType.R_PAREN):
                    break
                self.expect_type(TokenType.COMMA, ", or )")
        return items

    def partition_names(self) -> list[str] | None:
        """`PARTITION p`, `PARTITION (p1, p2)` or `PARTITIONS (...)`; None when absent."""
        if not (self.accept("PARTITION") or self.accept("PARTITIONS")):
            return None
        if self.is_type(TokenType.L_PAREN):
            return self.paren_list(lambda: self.identifier("partition name"))
        return [self.identifier("partition name")]

    def properties(self) -> dict[str, str]:
        """("k" = "v", ...)"""
        def pair() -> tuple[str, str]:
            k = self.string("property name")
            self.expect_type(TokenType.EQ, "=")
            v = self.string("property value")
            return k, v
        return dict(self.paren_list(pair))

    def expression_text(self, stop_at_comma: bool = True, what: str = "an expression") -> str:
        """The SQL text of one expression (or type): tokens up to a ')' (or, with
        `stop_at_comma`, a ',') at depth 0, not consumed."""
        depth, start = 0, self.peek()
        if start is None:
            raise self.error(f"Expected {what}")
        end = start
        while True:
            t = self.peek()
            if t is None:
                break
            if t.token_type == TokenType.L_PAREN:
                depth += 1
            elif t.token_type == TokenType.R_PAREN:
                if depth == 0:
                    break
                depth -= 1
            elif stop_at_comma and t.token_type == TokenType.COMMA and depth == 0:
                break
            end = self.next()
        return self.sql[start.start:end.end + 1]

    def rest_sql(self) -> str:
        t = self.peek()
        return "" if t is None else self.sql[t.start:]

    def expect_end(self) -> None:
        self.accept_type(TokenType.SEMICOLON)
        if self.peek() is not None:
            raise self.error("Unexpected input")
