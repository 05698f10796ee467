"""sql_mode PIPES_AS_CONCAT: `||` as string concatenation instead of OR (Doris's and MySQL's
mode of that name).

sqlglot's Doris dialect, like MySQL's, reads `||` as OR. `DorisPipes` is the project's Doris
dialect (server/parser/dialect.py's changes included) whose parser reads `a || b` as
`concat(a, b)` at the level of the bitwise operators (looser than arithmetic, tighter than
comparisons), so `'a' || 'b' = 'ab'` holds. The session sets `PIPES_AS_CONCAT` for the
statements it parses while its sql_mode names the mode; texts containing `||` are then kept
out of the caches keyed by text alone (server/parser/query_cache.py, server/short_circuit.py).
"""

from __future__ import annotations

import contextvars

from sqlglot import exp
from sqlglot.dialects.doris import Doris
from sqlglot.tokens import TokenType

import server.parser.dialect  # noqa: F401 - the project's changes to the Doris parser first

PIPES_AS_CONCAT: contextvars.ContextVar[bool] = contextvars.ContextVar("pipes_as_concat",
                                                                       default=False)


def enabled(sql_mode: object) -> bool:
    """Whether a sql_mode value (comma-separated names) holds PIPES_AS_CONCAT."""
    return "PIPES_AS_CONCAT" in {m.strip().upper() for m in str(sql_mode or "").split(",")}


class DorisPipes(Doris):
    """Doris with `||` as concatenation."""

    class Parser(Doris.Parser):
        DISJUNCTION = {k: v for k, v in Doris.Parser.DISJUNCTION.items()
                       if k != TokenType.DPIPE}

        def _parse_bitwise(self) -> exp.Expression | None:
            this = super()._parse_bitwise()
            parts = [this]
            while self._match(TokenType.DPIPE):
                parts.append(super()._parse_bitwise())
            if len(parts) == 1:
                return this
            return self.expression(exp.Concat(expressions=parts, safe=False))
