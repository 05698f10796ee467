"""Doris's partition selection after a table name, in the one form sqlglot parses.

Doris (`specifiedPartition` in its grammar) accepts, after a table name in FROM, INSERT INTO
and DELETE FROM:

    PARTITION p1            PARTITION (p1, p2)          PARTITIONS (p1, p2)
    TEMPORARY PARTITION p1  TEMPORARY PARTITION (tp1)   TEMPORARY PARTITIONS (tp1, tp2)

sqlglot parses only `PARTITION (p1, p2)` (into `Table.args["partition"]`). `rewrite` turns the
others into it before parsing; a temporary selection gets the marker name `TEMPORARY_MARK`
first in the list, which `planner/partition_selection.py:names_of` takes off again. Only a clause right after a name (an
identifier token) is rewritten, so CREATE TABLE's `(PARTITION p1 VALUES ...)` is untouched.
"""

from __future__ import annotations

from sqlglot.tokens import TokenType

from planner.partition_selection import TEMPORARY_MARK
from server.parser.tokens import tokenize

_NAME = (TokenType.VAR, TokenType.IDENTIFIER)


def rewrite(text: str, tokens: list) -> str:
    out, pos = [], 0
    i = 1
    while i < len(tokens):
        t, prev = tokens[i], tokens[i - 1]
        start = i
        temporary = t.token_type == TokenType.TEMPORARY
        if temporary:
            i += 1
        word = tokens[i].text.upper() if i < len(tokens) else ""
        if prev.token_type not in _NAME or word not in ("PARTITION", "PARTITIONS") \
                or i + 1 >= len(tokens):
            i = start + 1
            continue
        after = tokens[i + 1]
        if after.token_type == TokenType.L_PAREN:
            end = i + 1                       # keep the parenthesised list as it is
            names_start = after.end + 1
            body = None
        elif after.token_type in _NAME and word == "PARTITION":
            end = i + 1
            names_start = None
            body = text[after.start:after.end + 1]
            if after.token_type == TokenType.IDENTIFIER:
                body = f"`{after.text}`"
        else:
            i = start + 1
            continue
        if not temporary and word == "PARTITION" and body is None:
            i = end + 1                       # already sqlglot's form
            continue
        out.append(text[pos:t.start])
        mark = f"{TEMPORARY_MARK}, " if temporary else ""
        if body is None:
            out.append(f"PARTITION ({mark}")
            pos = names_start
        else:
            out.append(f"PARTITION ({mark}{body})")
            pos = tokens[end].end + 1
        i = end + 1
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


def rewrite_text(text: str) -> str:
    return rewrite(text, tokenize(text))
