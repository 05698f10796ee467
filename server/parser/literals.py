"""A statement's text as a template and its literals, without parsing (issue 14 item 4).

    split_literals("SELECT * FROM t WHERE k = 42 AND s = 'x'")
        -> ("SELECT * FROM t WHERE k = \\x01 AND s = \\x02", ("42", "x"))

Short-circuit point queries (server/short_circuit.py) key their cached light plans on the
template, so a lookup that differs from an earlier one only in its constants (what a client
binding prepared-statement parameters sends) finds its plan with one regular-expression pass
instead of a tokenizer and a parser. Number literals become \\x01, string literals \\x02 (bytes
that cannot occur in SQL text outside a literal); back-quoted identifiers are kept as they are.

Only texts whose literals read the same to any parser qualify: None for a text with comments
(they may carry hints), a `;`, a double-quoted string, a string with backslash or doubled-quote
escapes, user or system variables (`@`), or a `?` placeholder. The caller still checks, when it
builds a plan from a real parse, that the parse's literals are these values in this order.
"""

from __future__ import annotations

import re

NUMBER, STRING = "\x01", "\x02"

_TOKENS = re.compile(r"""
    (?P<ident>`[^`]*`)
  | (?P<string>'[^'\\]*')(?!')
  | (?P<bad>["@#;?\\\x01\x02]|/\*|--|')
  | (?P<number>(?<![\w$.])\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?![\w$.]))
""", re.VERBOSE)


def split_literals(sql: str) -> tuple[str, tuple[str, ...]] | None:
    """(template, literal values in text order), or None for a text that does not qualify."""
    parts: list[str] = []
    values: list[str] = []
    pos = 0
    for m in _TOKENS.finditer(sql):
        kind = m.lastgroup
        if kind == "ident":
            continue
        if kind == "bad":
            return None
        parts.append(sql[pos:m.start()])
        if kind == "string":
            parts.append(STRING)
            values.append(m.group()[1:-1])
        else:
            parts.append(NUMBER)
            values.append(m.group())
        pos = m.end()
    parts.append(sql[pos:])
    return "".join(parts), tuple(values)
