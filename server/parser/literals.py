"""A statement's text as a template and its literals, without parsing (issue 14 item 4).

    split_literals("SELECT * FROM t WHERE k = 42 AND s = 'x'")
        -> ("SELECT * FROM t WHERE k = \\x01 AND s = \\x02", ("42", "x"))

Short-circuit point queries (server/short_circuit.py) key their cached light plans on the
template, so a lookup that differs from an earlier one only in its constants (what a client
binding prepared-statement parameters sends) finds its plan with one regular-expression pass
instead of a tokenizer and a parser. Number literals become \\x01, string literals \\x02 (bytes
that cannot occur in SQL text outside a literal); back-quoted identifiers are kept as they are.

Only texts whose literals read the same to any parser qualify: None for a text with comments
(they may carry hints), a `;`, a double-quoted string, a string with backslash escapes, user or
system variables (`@`), or a `?` placeholder. A doubled quote inside a string is one quote
(`'O''Brien'` is the literal O'Brien in every sql_mode). The caller still checks, when it
builds a plan from a real parse, that the parse's literals are these values in this order.
"""

from __future__ import annotations

import re

NUMBER, STRING = "\x01", "\x02"

_TOKENS = re.compile(r"""
    (?P<ident>`[^`]*`)
  | (?P<string>'(?:[^'\\]|'')*')(?!')
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
            values.append(m.group()[1:-1].replace("''", "'"))
        else:
            parts.append(NUMBER)
            values.append(m.group())
        pos = m.end()
    parts.append(sql[pos:])
    return "".join(parts), tuple(values)


def split_prepared(sql: str, spots: list[tuple[int, int]], values: list,
                   segments: dict) -> tuple[str, tuple[str, ...]] | None:
    """`split_literals(bind_sql(sql, spots, values))` of a prepared statement's text and
    parameters, without writing the text and scanning it again: the text between the `?`s is
    split once (kept in `segments`, the statement's own dict), each parameter is a literal of
    its own. None where that call would give None or where a parameter is not an integer or a
    plain string (the caller binds the text and splits it)."""
    parts: list[str] = []
    out: list[str] = []
    pos = 0
    for i, ((start, end), value) in enumerate(zip(spots, values)):
        if not _add_segment(sql, pos, start, i, segments, parts, out):
            return None
        before, after = sql[start - 1:start], sql[end:end + 1]
        if before in _QUOTES or after in _QUOTES:
            return None  # a literal next to a quote: left to the tokenizer of the bound text
        if type(value) is int:
            if _WORD.match(before) or _WORD.match(after):
                return None  # the digits would join a word: not a literal of their own
            if value < 0 and before == "-":
                return None  # `--`: a comment to the tokenizer
            if value < 0:
                parts.append("-" + NUMBER)
                out.append(str(-value))
            else:
                parts.append(NUMBER)
                out.append(str(value))
        elif type(value) is str and not _UNSAFE.search(value):
            parts.append(STRING)
            out.append(value)
        else:
            return None
        pos = end
    if not _add_segment(sql, pos, len(sql), len(spots), segments, parts, out):
        return None
    return "".join(parts), tuple(out)


_QUOTES = ("'", '"', "`", "\\")
_WORD = re.compile(r"[\w$.]")
_UNSAFE = re.compile(r"[\\\x00\x01\x02]")  # a quote is bound doubled: split back to one


def _add_segment(sql: str, start: int, end: int, i: int, segments: dict, parts: list,
                 out: list) -> bool:
    found = segments.get(i)
    if found is None:
        found = segments[i] = split_literals(sql[start:end]) or (None, ())
    if found[0] is None:
        return False
    parts.append(found[0])
    out.extend(found[1])
    return True
