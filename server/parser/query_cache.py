"""Parsed queries kept across statements (issue 14: parsing is a large share of a point
query's fixed cost). Two levels, both for one-statement queries only:

    cached(sql)            the tree of exactly this text
    lookup(tokens)         the tree of a text that differs from a remembered one only in its
                           number literals (`WHERE c_custkey = 777` and `= 778`; what a client
                           binding prepared-statement parameters sends): the template's tree
                           with this text's numbers put into its literal nodes
    remember(sql, text, tokens, stmt)   after a parse

Parsing depends on the text alone (no session state, no catalog: names are resolved when the
query is bound, so DDL cannot make an entry stale), so a text's tree can be reused; each use
gets its own copy, as binding rewrites trees in place. A template is the query parsed with
each number replaced by a distinct sentinel number, whose literal nodes are then found again;
it is kept only when putting the original numbers back gives a tree equal to the real parse
(so a number the parser does not keep as one literal node, or one it folds, disables the
template). Only queries are kept (SELECT, set operations, WITH ...), never errors; the key of
a template is its token types and texts with the numbers left out (comments, which carry
hints, included).
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.tokens import TokenType

from server.lru import Lru

CAPACITY = 512  # entries per level
MAX_TEXT = 4096  # longer texts (generated queries) are rarely repeated
_SENTINEL = 7_390_000_000_000_001  # sentinel i is _SENTINEL + i

_texts = Lru(CAPACITY)  # text -> tree
_templates = Lru(CAPACITY)  # token template -> (tree with sentinels, number count)


def cached(sql: str) -> exp.Expression | None:
    stmt = _texts.get(sql)
    return stmt.copy() if stmt is not None else None


def _key(tokens: list) -> tuple:
    return tuple((t.token_type, None if t.token_type == TokenType.NUMBER else t.text,
                  tuple(t.comments) if t.comments else None) for t in tokens)


def _fill(tree: exp.Expression, numbers: list[str]) -> exp.Expression | None:
    """`tree` (a template copy) with sentinel i's literal holding numbers[i], or None if the
    sentinels are not exactly one literal each."""
    seen = 0
    for node in tree.find_all(exp.Literal):
        if node.is_string:
            continue
        try:
            i = int(node.this) - _SENTINEL
        except ValueError:
            continue
        if 0 <= i < len(numbers):
            node.set("this", numbers[i])
            seen += 1
    return tree if seen == len(numbers) else None


def lookup(tokens: list) -> exp.Expression | None:
    if not tokens:
        return None
    found = _templates.get(_key(tokens))
    if found is None:
        return None
    template, count = found
    numbers = [t.text for t in tokens if t.token_type == TokenType.NUMBER]
    return _fill(template.copy(), numbers) if len(numbers) == count else None


def remember(sql: str, text: str, tokens: list, stmt: object) -> None:
    """Keep `stmt`, parsed from `sql` (one statement: `text`, its tokens relative to it)."""
    if len(sql) > MAX_TEXT or not isinstance(stmt, exp.Query) or stmt.meta:
        return
    if any(True for _ in stmt.find_all(exp.Placeholder, exp.Parameter)):
        return
    _texts.put(sql, stmt.copy())
    numbers = [t for t in tokens if t.token_type == TokenType.NUMBER]
    if not numbers:
        return
    key = _key(tokens)
    if _templates.get(key) is not None:
        return
    from server.parser.statement import parse_statement, tokenize
    parts, pos = [], 0
    for i, t in enumerate(numbers):
        parts += [text[pos:t.start], str(_SENTINEL + i)]
        pos = t.end + 1
    parts.append(text[pos:])
    sentinel_text = "".join(parts)
    try:
        template = parse_statement(sentinel_text, tokenize(sentinel_text))
    except Exception:  # noqa: BLE001 - a text that only parses with its own numbers: no template
        return
    if not isinstance(template, exp.Query):
        return
    check = _fill(template.copy(), [t.text for t in numbers])
    if check is not None and check == stmt:
        _templates.put(key, (template, len(numbers)))
